# Warnings are errors for Kiln's own code; third-party headers are SYSTEM.
function(kiln_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  # GCC 12 reports -Wrestrict inside libstdc++'s own string concatenation at
  # -O2/-O3 (GCC bug 105329), which no user code can avoid; GCC 13 fixed it.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
endfunction()

# In a unity build (CI's ci-* presets) each source is an included file of its
# batch, and GCC warns about a class there with a member of an anonymous-
# namespace type as it would in a header (-Wsubobject-linkage: the class could
# be defined in several translation units). Here the class is still only that
# source's, so the warning is off in unity builds with GCC.
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
endif()
