# Precompiled headers for the test programs with many sources, in Clang
# builds (CI's sanitizer build).
#
# Every test source parses GoogleTest and the core IR headers before its own
# code; a target's precompiled header parses them once. Measured on 8
# tests/unit sources, CPU seconds: Clang 19 with ASan+UBSan at -O0 (the
# debug preset) 28.4 -> 13.3, plus 3.5 s once per target for the header.
# GCC 12 would save less (43.8 -> 29.9 at -O3) and, through a precompiled
# header, reports libstdc++'s own false -Warray-bounds positives (std::string
# copies in npy_test.cc and autodiff_jvp_test.cc) that it hides when the
# headers are read as system headers, so GCC builds parse them per source.
# A target of few sources would spend more on the header than it saves.
#
# CI's presets (ci-unity in CMakePresets.json) also build these targets as
# unity builds; the precompiled header then serves each batch of 8 sources.
option(KILN_TEST_PCH "Precompile GoogleTest and the core headers for the large test programs (Clang)" ON)

# kiln_test_precompiled_headers(TARGET...): the targets that exist get the
# shared header set; the rest (a backend this build lacks) are skipped.
function(kiln_test_precompiled_headers)
  if(NOT KILN_TEST_PCH OR NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    return()
  endif()
  foreach(target IN LISTS ARGN)
    if(TARGET ${target})
      target_precompile_headers(${target} PRIVATE
        <cmath> <memory> <string> <vector> <gtest/gtest.h>
        "${PROJECT_SOURCE_DIR}/core/backend.h" "${PROJECT_SOURCE_DIR}/core/builder.h"
        "${PROJECT_SOURCE_DIR}/core/hlo_parser.h" "${PROJECT_SOURCE_DIR}/core/ir.h"
        "${PROJECT_SOURCE_DIR}/core/literal.h" "${PROJECT_SOURCE_DIR}/core/status.h")
    endif()
  endforeach()
endfunction()
