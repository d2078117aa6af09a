/* What every C test of the ABI checks with: CHECK(cond), CHECK_OK(call) and
 * EXPECT_ERROR(call, code, needle), each printing the failure and counting it
 * in g_failures (the test exits non-zero when it is not zero). Each test is
 * one C99 translation unit, so the counter is static. */
#ifndef KILN_TESTS_CAPI_CHECK_H_
#define KILN_TESTS_CAPI_CHECK_H_

#include <stdio.h>
#include <string.h>

#include "kiln/kiln.h"

static int g_failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                            \
    }                                                                          \
  } while (0)

/* Expects success; prints and frees the status otherwise. */
#define CHECK_OK(expr)                                                                                     \
  do {                                                                                                     \
    kiln_status_t* check_status_ = (expr);                                                                 \
    if (check_status_ != NULL) {                                                                           \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #expr,                             \
              kiln_status_code_name(kiln_status_code(check_status_)), kiln_status_message(check_status_)); \
      ++g_failures;                                                                                        \
      kiln_status_destroy(check_status_);                                                                  \
    }                                                                                                      \
  } while (0)

/* Expects failure with `code` and a message containing `needle`; frees it. */
static inline void expect_error(kiln_status_t* status, kiln_status_code_t code, const char* needle,
                                const char* what, int line) {
  if (status == NULL) {
    fprintf(stderr, "line %d: %s succeeded, expected %s\n", line, what, kiln_status_code_name(code));
    ++g_failures;
    return;
  }
  if (kiln_status_code(status) != code) {
    fprintf(stderr, "line %d: %s gave %s (%s), expected %s\n", line, what,
            kiln_status_code_name(kiln_status_code(status)), kiln_status_message(status),
            kiln_status_code_name(code));
    ++g_failures;
  } else if (strstr(kiln_status_message(status), needle) == NULL) {
    fprintf(stderr, "line %d: %s message '%s' does not mention '%s'\n", line, what,
            kiln_status_message(status), needle);
    ++g_failures;
  }
  kiln_status_destroy(status);
}
#define EXPECT_ERROR(expr, code, needle) expect_error((expr), (code), (needle), #expr, __LINE__)

#endif /* KILN_TESTS_CAPI_CHECK_H_ */
