/* A plugin for `kiln info --ops --plugin`: registers the seed's ZeroOut ops
 * (samples/c/zero_out_ops.h) when the tool calls kiln_plugin_init. */
#include "zero_out_ops.h"

__attribute__((visibility("default"))) kiln_status_t* kiln_plugin_init(void);

kiln_status_t* kiln_plugin_init(void) { return register_zero_out_ops(); }
