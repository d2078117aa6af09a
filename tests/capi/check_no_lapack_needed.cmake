# Fails when LIBRARY (libkiln.so) names LAPACK, LAPACKE, BLAS or OpenBLAS
# among the libraries it needs: they are loaded with dlopen by the first
# LAPACK custom call (core/interpreter/lapack_calls_library.h says why).
#   cmake -DLIBRARY=... -DREADELF=... -P check_no_lapack_needed.cmake
execute_process(COMMAND ${READELF} -d ${LIBRARY} OUTPUT_VARIABLE dynamic RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${READELF} -d ${LIBRARY} failed (${result})")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dynamic}")
if(NOT needed)
  message(FATAL_ERROR "${READELF} -d ${LIBRARY} lists no NEEDED entries: not a dynamic section")
endif()
foreach(entry IN LISTS needed)
  if(entry MATCHES "lapack|blas")
    message(FATAL_ERROR "${LIBRARY} needs a LAPACK or BLAS library at load time: ${entry}")
  endif()
endforeach()
message(STATUS "${LIBRARY} needs: ${needed}")
