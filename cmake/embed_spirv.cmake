# Turns a SPIR-V file into a C++ header holding its words:
#   cmake -DINPUT=x.spv -DOUTPUT=x.h -DNAME=kX -P embed_spirv.cmake
# (kiln_embed_glsl_shader in glsl_shaders.cmake runs it after glslc).
# SPIR-V files from glslc are little-endian, as is every machine Kiln targets.
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" length)
math(EXPR remainder "${length} % 8")
if(length EQUAL 0 OR NOT remainder EQUAL 0)
  message(FATAL_ERROR "${INPUT} is not a whole number of 32-bit words")
endif()
string(REGEX MATCHALL "........" bytes4 "${hex}")
set(words "")
foreach(word ${bytes4})
  string(SUBSTRING ${word} 0 2 b0)
  string(SUBSTRING ${word} 2 2 b1)
  string(SUBSTRING ${word} 4 2 b2)
  string(SUBSTRING ${word} 6 2 b3)
  string(APPEND words "0x${b3}${b2}${b1}${b0}u,")
endforeach()
file(WRITE ${OUTPUT} "// Generated from ${INPUT} by embed_spirv.cmake; do not edit.\n#pragma once\n#include <cstdint>\n"
                     "inline constexpr uint32_t ${NAME}[] = {${words}};\n")
