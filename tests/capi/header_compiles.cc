/* kiln.h must compile on its own as C++ (C++11 and later) with every
 * initialiser macro; the test compiles this file with -pedantic -Werror. */
#include "kiln/kiln.h"

int kiln_header_check(void);

int kiln_header_check(void) {
  kiln_client_options_t client = KILN_CLIENT_OPTIONS_INIT;
  kiln_compile_options_t compile = KILN_COMPILE_OPTIONS_INIT;
  kiln_execute_options_t execute = KILN_EXECUTE_OPTIONS_INIT;
  kiln_dot_dimension_numbers_t dot = KILN_DOT_DIMENSION_NUMBERS_INIT;
  kiln_conv_dimension_numbers_t conv = KILN_CONV_DIMENSION_NUMBERS_INIT;
  kiln_gather_dimension_numbers_t gather = KILN_GATHER_DIMENSION_NUMBERS_INIT;
  kiln_scatter_dimension_numbers_t scatter = KILN_SCATTER_DIMENSION_NUMBERS_INIT;
  kiln_custom_call_fn fn = 0;
  kiln_op_t op = KILN_OP_INVALID;
  (void)fn;
  return (int)(client.struct_size + compile.struct_size + execute.struct_size + dot.struct_size +
               conv.struct_size + gather.struct_size + scatter.struct_size) +
         (int)op + KILN_VERSION_NUMBER;
}
