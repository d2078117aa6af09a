# Warnings are errors for Kiln's own code; third-party headers are SYSTEM.
function(kiln_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
