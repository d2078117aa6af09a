# Warnings are errors for Kiln's own code; third-party headers are SYSTEM.
function(kiln_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  # GCC 12 reports -Wrestrict inside libstdc++'s own string concatenation at
  # -O2/-O3 (GCC bug 105329), which no user code can avoid; GCC 13 fixed it.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
endfunction()
