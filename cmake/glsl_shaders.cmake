# GLSL compute shaders compiled at build time with shaderc's glslc and
# embedded as SPIR-V words: the Vulkan backend's library shaders
# (backends/vulkan/shaders) and the Vulkan tests' own (tests/vulkan/shaders).
include_guard(GLOBAL)
find_program(KILN_GLSLC glslc DOC "shaderc's glslc, to compile the Vulkan backend's and tests' GLSL shaders")

# kiln_embed_glsl_shader(HEADERS_VAR SOURCE NAME SYMBOL [DEFINE...])
# compiles SOURCE with glslc for Vulkan 1.2, each DEFINE given as -DDEFINE,
# into shaders/NAME.h of the current binary directory, a header holding
# `inline constexpr uint32_t SYMBOL[]`, and appends that header to
# HEADERS_VAR (list it among a target's sources so that it is made first).
function(kiln_embed_glsl_shader headers_var source name symbol)
  if(NOT KILN_GLSLC)
    message(FATAL_ERROR "Kiln: glslc is needed to compile ${source} (install glslc with .ci/install-deps)")
  endif()
  # Beside this file (a variable set at include time would not reach the
  # other directories that call the function: the include is guarded).
  set(embed ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/embed_spirv.cmake)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/shaders)
  set(spv ${dir}/${name}.spv)
  set(header ${dir}/${name}.h)
  set(defines "")
  foreach(define ${ARGN})
    list(APPEND defines -D${define})
  endforeach()
  add_custom_command(
    OUTPUT ${header}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${KILN_GLSLC} --target-env=vulkan1.2 -O ${defines} -o ${spv} ${source}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${spv} -DOUTPUT=${header} -DNAME=${symbol} -P ${embed}
    DEPENDS ${source} ${embed}
    COMMENT "glslc ${name}"
    VERBATIM)
  set(${headers_var} ${${headers_var}} ${header} PARENT_SCOPE)
endfunction()
