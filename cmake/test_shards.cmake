# How the GoogleTest programs and the conformance corpus become CTest tests.
#
#   KILN_TEST_SHARDS = 0 (the default): one CTest test per GoogleTest case
#     (gtest_discover_tests) and per (backend, corpus program), so a failure
#     names its case; the release build.
#   KILN_TEST_SHARDS = N: N CTest tests per GoogleTest program,
#     TARGET.shardIofN, each running its share of the cases in one process
#     (GoogleTest's sharding variables), and N per corpus backend
#     (conformance.BACKEND.shardIofN, `kiln_conformance table --shard`). The
#     sanitizer presets use it: under ASan or TSan, starting a process costs
#     more than most cases take (1,064 unit cases take 5.5 s of CPU in one
#     process and 50 s as a process each, even without a sanitizer), and the
#     shards still keep both cores busy. A failing shard prints the failing
#     cases by name.
set(KILN_TEST_SHARDS 0 CACHE STRING "0: a CTest test per GoogleTest case and corpus program; N: N shards each")
include(GoogleTest)

# kiln_gtest_tests(TARGET [TEST_SUFFIX S] [TEST_FILTER F] [LABELS L...]
#                  [ENVIRONMENT VAR=VALUE...])
function(kiln_gtest_tests target)
  cmake_parse_arguments(arg "" "TEST_SUFFIX;TEST_FILTER" "LABELS;ENVIRONMENT" ${ARGN})
  if(KILN_TEST_SHARDS GREATER 0)
    set(filter)
    if(arg_TEST_FILTER)
      set(filter "--gtest_filter=${arg_TEST_FILTER}")
    endif()
    math(EXPR last "${KILN_TEST_SHARDS} - 1")
    foreach(index RANGE ${last})
      math(EXPR shown "${index} + 1")
      set(name "${target}.shard${shown}of${KILN_TEST_SHARDS}${arg_TEST_SUFFIX}")
      add_test(NAME ${name} COMMAND ${target} ${filter})
      set_tests_properties(${name} PROPERTIES
        LABELS "${arg_LABELS}"
        ENVIRONMENT "GTEST_TOTAL_SHARDS=${KILN_TEST_SHARDS};GTEST_SHARD_INDEX=${index};${arg_ENVIRONMENT}")
    endforeach()
  else()
    set(options DISCOVERY_TIMEOUT 60)
    if(arg_TEST_SUFFIX)
      list(APPEND options TEST_SUFFIX ${arg_TEST_SUFFIX})
    endif()
    if(arg_TEST_FILTER)
      list(APPEND options TEST_FILTER ${arg_TEST_FILTER})
    endif()
    set(properties LABELS "${arg_LABELS}")
    if(arg_ENVIRONMENT)
      list(APPEND properties ENVIRONMENT "${arg_ENVIRONMENT}")
    endif()
    gtest_discover_tests(${target} ${options} PROPERTIES ${properties})
  endif()
endfunction()
