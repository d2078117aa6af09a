# The instrumented builds: each is one option, chosen by a CMake preset.
#   KILN_SANITIZE  AddressSanitizer + UndefinedBehaviorSanitizer, every target
#                  (preset debug).
#   KILN_FUZZ      libFuzzer + ASan + UBSan; only the parsers (kiln_ir, the
#                  files directly in core/) and the fuzzers of tests/fuzz are
#                  built (preset fuzz).
#   KILN_TSAN      ThreadSanitizer; only the library and the tests labelled
#                  "concurrency" are built (preset tsan).
option(KILN_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(KILN_FUZZ "Build only the parsers (kiln_ir) and their libFuzzer programs, with ASan and UBSan" OFF)
option(KILN_TSAN "Build with ThreadSanitizer: only the library and the concurrency tests" OFF)

set(kiln_instrumented_builds 0)
foreach(option KILN_SANITIZE KILN_FUZZ KILN_TSAN)
  if(${option})
    math(EXPR kiln_instrumented_builds "${kiln_instrumented_builds} + 1")
  endif()
endforeach()
if(kiln_instrumented_builds GREATER 1)
  message(FATAL_ERROR "KILN_SANITIZE, KILN_FUZZ and KILN_TSAN are separate builds: turn on one of them")
endif()
if((KILN_FUZZ OR KILN_TSAN) AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "KILN_FUZZ and KILN_TSAN need Clang (CMAKE_CXX_COMPILER=clang++-19), "
                      "not ${CMAKE_CXX_COMPILER_ID}")
endif()

if(KILN_SANITIZE OR KILN_FUZZ)
  # vptr checks need the C++ UBSan runtime, which plain C programs linking
  # libkiln (the C test, the C sample) do not get.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    # Clang's -fsanitize=function reads a type signature just before every
    # function called through a pointer; JIT-compiled kernels have none, and
    # when a kernel starts a fresh page that read faults.
    add_compile_options(-fno-sanitize=function)
  endif()
endif()

if(KILN_FUZZ)
  # Coverage instrumentation for every object, so libFuzzer is steered by the
  # parsers' own branches; only the fuzzers link libFuzzer itself
  # (-fsanitize=fuzzer, tests/fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(KILN_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
