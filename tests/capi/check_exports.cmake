# Checks that a shared library exports only kiln_* symbols (and at least one).
# Usage: cmake -DLIBRARY=path/to/libkiln.so -DNM=nm -P check_exports.cmake
execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(count 0)
set(foreign "")
foreach(line IN LISTS lines)
  # nm's lower-case types are local symbols, which nothing can bind to (the
  # linker may still list some in .dynsym); u, v and w are global kinds.
  if(line MATCHES "^[0-9a-fA-F]* *[A-Zuvw] ([^ ]+)$")
    set(name ${CMAKE_MATCH_1})
    if(name MATCHES "^kiln_")
      math(EXPR count "${count} + 1")
    else()
      list(APPEND foreign ${name})
    endif()
  endif()
endforeach()
if(foreign)
  message(FATAL_ERROR "libkiln exports symbols outside the C ABI: ${foreign}")
endif()
if(count LESS 100)
  message(FATAL_ERROR "libkiln exports only ${count} kiln_* symbols; expected the whole C ABI")
endif()
message(STATUS "libkiln exports ${count} kiln_* symbols and nothing else")
