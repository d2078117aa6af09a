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

# kiln_gtest_shard_tests(NAME TARGET COUNT [TEST_SUFFIX S] [TEST_FILTER F]
#                        [LABELS L...] [ENVIRONMENT VAR=VALUE...]
#                        [PROPERTIES PROPERTY VALUE...] [NAMES VARIABLE])
# COUNT CTest tests NAME.shardIofCOUNT[S], each running every COUNT-th case
# of TARGET (those FILTER selects) in one process, by GoogleTest's sharding
# variables: a program of many cases that would be one long test. A case
# that starts the program again passes the variables on to it: keep such
# cases out of the shards. NAMES: a variable to set to the tests' names.
function(kiln_gtest_shard_tests name target count)
  cmake_parse_arguments(arg "" "TEST_SUFFIX;TEST_FILTER;NAMES" "LABELS;ENVIRONMENT;PROPERTIES" ${ARGN})
  set(filter)
  if(arg_TEST_FILTER)
    set(filter "--gtest_filter=${arg_TEST_FILTER}")
  endif()
  set(shards)
  math(EXPR last "${count} - 1")
  foreach(index RANGE ${last})
    math(EXPR shown "${index} + 1")
    set(shard "${name}.shard${shown}of${count}${arg_TEST_SUFFIX}")
    add_test(NAME ${shard} COMMAND ${target} ${filter})
    set_tests_properties(${shard} PROPERTIES
      LABELS "${arg_LABELS}"
      ENVIRONMENT "GTEST_TOTAL_SHARDS=${count};GTEST_SHARD_INDEX=${index};${arg_ENVIRONMENT}"
      ${arg_PROPERTIES})
    list(APPEND shards ${shard})
  endforeach()
  if(arg_NAMES)
    set(${arg_NAMES} ${shards} PARENT_SCOPE)
  endif()
endfunction()

# kiln_gtest_tests(TARGET [SHARDS N] [SEPARATE_CASES SUITE.CASE...]
#                  [TEST_SUFFIX S] [TEST_FILTER F] [LABELS L...]
#                  [ENVIRONMENT VAR=VALUE...])
# Where the build shards (KILN_TEST_SHARDS > 0):
#   SHARDS: this program's shard count, for a program whose cases take much
#     longer than the others' (fewer cases per process: shorter tests).
#   SEPARATE_CASES: cases that take as long as a shard's share of the rest
#     are tests of their own, named as in the per-case build (SUITE.CASE[S]),
#     and the shards leave them out, so that no shard holds one by chance.
function(kiln_gtest_tests target)
  cmake_parse_arguments(arg "" "SHARDS;TEST_SUFFIX;TEST_FILTER" "SEPARATE_CASES;LABELS;ENVIRONMENT" ${ARGN})
  if(KILN_TEST_SHARDS GREATER 0)
    set(count ${KILN_TEST_SHARDS})
    if(arg_SHARDS)
      set(count ${arg_SHARDS})
    endif()
    set(filter "${arg_TEST_FILTER}")
    foreach(case IN LISTS arg_SEPARATE_CASES)
      # GoogleTest's filter is POSITIVE[-NEGATIVE], patterns joined by ':'.
      if(filter MATCHES "-")
        string(APPEND filter ":${case}")
      else()
        string(APPEND filter "-${case}")
      endif()
      add_test(NAME ${case}${arg_TEST_SUFFIX} COMMAND ${target} --gtest_filter=${case})
      set_tests_properties(${case}${arg_TEST_SUFFIX} PROPERTIES LABELS "${arg_LABELS}"
                           ENVIRONMENT "${arg_ENVIRONMENT}" FAIL_REGULAR_EXPRESSION "Running 0 tests")
    endforeach()
    set(options)
    if(arg_TEST_SUFFIX)
      list(APPEND options TEST_SUFFIX ${arg_TEST_SUFFIX})
    endif()
    if(filter)
      list(APPEND options TEST_FILTER ${filter})
    endif()
    kiln_gtest_shard_tests(${target} ${target} ${count} ${options} LABELS ${arg_LABELS}
                           ENVIRONMENT ${arg_ENVIRONMENT})
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
