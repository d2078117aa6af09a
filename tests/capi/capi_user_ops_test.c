/* User-defined ops through the C ABI: the seed's ZeroOut in its four versions
 * (samples/c/zero_out_ops.h) on cpu and interpreter, attribute kinds and
 * constraints, shape functions, kernel errors reaching the caller, HLO text
 * round trips, every error a definition or call can meet, and gradients
 * (kiln_user_op_def_set_grad_fn) through kiln_computation_value_and_grad. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "zero_out_ops.h"

/* Builds `op` over `num` s32/f32 vector parameters of length n with `attrs`;
 * returns the build status and the computation. */
static kiln_status_t* build_call(const char* op, const char* attrs, kiln_element_type_t type, size_t num,
                                 int64_t n, kiln_computation_t** out) {
  kiln_builder_t* builder = NULL;
  kiln_op_t params[4];
  size_t i;
  kiln_status_t* status = kiln_builder_create(op, &builder);
  if (status != NULL) return status;
  for (i = 0; i < num; ++i) params[i] = kiln_op_parameter(builder, (int64_t)i, type, &n, 1, NULL, "x");
  status = kiln_builder_build(builder, kiln_op_call_registered(builder, op, params, num, attrs), out);
  kiln_builder_destroy(builder);
  return status;
}

/* Compiles and runs `computation` on `backend` with `num` copies of the 4-byte
 * input `x` (n elements); result leaf `which` to `out`. */
static kiln_status_t* run_on(const char* backend, const kiln_computation_t* computation,
                             kiln_element_type_t type, size_t num, const void* x, int64_t n, size_t which,
                             void* out) {
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* args[4] = {NULL, NULL, NULL, NULL};
  kiln_buffer_t* results[4] = {NULL, NULL, NULL, NULL};
  size_t num_results = 0, i;
  kiln_status_t* status;
  options.backend = backend;
  status = kiln_client_create(&options, &client);
  if (status == NULL) status = kiln_client_compile(client, computation, NULL, &executable);
  for (i = 0; status == NULL && i < num; ++i) {
    status = kiln_client_buffer_from_host(client, type, &n, 1, NULL, x, (size_t)n * 4, &args[i]);
  }
  if (status == NULL) status = kiln_executable_execute(executable, args, num, NULL, results, 4, &num_results);
  if (status == NULL) status = kiln_buffer_to_host(results[which], out, (size_t)n * 4);
  for (i = 0; i < 4; ++i) {
    kiln_buffer_destroy(args[i]);
    kiln_buffer_destroy(results[i]);
  }
  kiln_executable_destroy(executable);
  kiln_client_destroy(client);
  return status;
}

static const int32_t kX[5] = {5, 4, 3, 2, 1};
static const float kXf[5] = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
static const char* const kBackends[2] = {"cpu", "interpreter"};

static void check_s32(const char* op, const char* attrs, size_t num, size_t which, const int32_t* want) {
  size_t b;
  for (b = 0; b < 2; ++b) {
    kiln_computation_t* computation = NULL;
    int32_t got[5] = {-1, -1, -1, -1, -1};
    CHECK_OK(build_call(op, attrs, KILN_TYPE_S32, num, 5, &computation));
    if (computation == NULL) return;
    CHECK_OK(run_on(kBackends[b], computation, KILN_TYPE_S32, num, kX, 5, which, got));
    if (memcmp(got, want, sizeof got) != 0) {
      fprintf(stderr, "%s %s on %s: got [%d %d %d %d %d]\n", op, attrs ? attrs : "", kBackends[b], got[0],
              got[1], got[2], got[3], got[4]);
      ++g_failures;
    }
    kiln_computation_destroy(computation);
  }
}

static void test_zero_out_versions(void) {
  static const int32_t first[5] = {5, 0, 0, 0, 0};
  static const int32_t third[5] = {0, 0, 0, 2, 0};
  size_t b;
  check_s32("ZeroOut", NULL, 1, 0, first);
  check_s32("ZeroOutIndex", NULL, 1, 0, first); /* the default preserve_index = 0 */
  check_s32("ZeroOutIndex", "{preserve_index = 3}", 1, 0, third);
  check_s32("ZeroOutPoly", NULL, 1, 0, first);
  check_s32("ZeroOutPoly", "{T = int32}", 1, 0, first);
  check_s32("ZeroOutList", NULL, 3, 2, first);
  check_s32("ZeroOutList", "{N = 2, T = s32}", 2, 1, first);
  for (b = 0; b < 2; ++b) {
    kiln_computation_t* computation = NULL;
    float got[5] = {0};
    CHECK_OK(build_call("ZeroOutPoly", NULL, KILN_TYPE_F32, 1, 5, &computation));
    CHECK_OK(run_on(kBackends[b], computation, KILN_TYPE_F32, 1, kXf, 5, 0, got));
    CHECK(got[0] == 1.5f && got[1] == 0 && got[4] == 0);
    kiln_computation_destroy(computation);
  }
}

static void test_call_errors(void) {
  kiln_computation_t* computation = NULL;
  /* A wrong input type. */
  EXPECT_ERROR(build_call("ZeroOut", NULL, KILN_TYPE_F32, 1, 5, &computation), KILN_STATUS_INVALID_ARGUMENT,
               "ZeroOut: input 'to_zero' must be s32 (to_zero: int32), got f32");
  CHECK_OK(build_call("ZeroOutPoly", NULL, KILN_TYPE_S32, 1, 5, &computation));
  kiln_computation_destroy(computation);
  computation = NULL;
  /* A type outside T's set. */
  {
    kiln_builder_t* builder = NULL;
    kiln_op_t x;
    int64_t n = 3;
    CHECK_OK(kiln_builder_create("f64", &builder));
    x = kiln_op_parameter(builder, 0, KILN_TYPE_F64, &n, 1, NULL, "x");
    CHECK(kiln_op_call_registered(builder, "ZeroOutPoly", &x, 1, NULL) == KILN_OP_INVALID);
    EXPECT_ERROR(kiln_builder_first_error(builder), KILN_STATUS_INVALID_ARGUMENT,
                 "ZeroOutPoly: attribute 'T' is f64, not one of {f32, s32}");
    kiln_builder_destroy(builder);
  }
  /* A list shorter than its minimum (N >= 1 with no tensors). */
  EXPECT_ERROR(build_call("ZeroOutList", NULL, KILN_TYPE_S32, 0, 5, &computation),
               KILN_STATUS_INVALID_ARGUMENT, "fewer than its minimum 1");
  /* Bounds of preserve_index (>= 0), an attribute of the wrong kind, an unknown one. */
  EXPECT_ERROR(build_call("ZeroOutIndex", "{preserve_index = -1}", KILN_TYPE_S32, 1, 5, &computation),
               KILN_STATUS_INVALID_ARGUMENT,
               "ZeroOutIndex: attribute 'preserve_index' is -1, less than its minimum 0");
  EXPECT_ERROR(build_call("ZeroOutIndex", "{preserve_index = \"one\"}", KILN_TYPE_S32, 1, 5, &computation),
               KILN_STATUS_INVALID_ARGUMENT, "attribute 'preserve_index' must be int, got string");
  EXPECT_ERROR(build_call("ZeroOutIndex", "{keep = 1}", KILN_TYPE_S32, 1, 5, &computation),
               KILN_STATUS_INVALID_ARGUMENT, "ZeroOutIndex: unknown attribute 'keep'");
  EXPECT_ERROR(build_call("ZeroOutIndex", "{preserve_index = }", KILN_TYPE_S32, 1, 5, &computation),
               KILN_STATUS_INVALID_ARGUMENT, "op 'ZeroOutIndex': attributes:");
  /* Too many operands; an op nobody registered. */
  EXPECT_ERROR(build_call("ZeroOut", NULL, KILN_TYPE_S32, 2, 5, &computation), KILN_STATUS_INVALID_ARGUMENT,
               "ZeroOut: takes 1 operand(s)");
  EXPECT_ERROR(build_call("NoSuchOp", NULL, KILN_TYPE_S32, 1, 5, &computation), KILN_STATUS_NOT_FOUND,
               "op 'NoSuchOp' is not registered");
  /* The kernel's own error (the seed's bounds check) reaches the caller. */
  {
    int32_t got[5];
    size_t b;
    CHECK_OK(build_call("ZeroOutIndex", "{preserve_index = 7}", KILN_TYPE_S32, 1, 5, &computation));
    for (b = 0; b < 2; ++b) {
      EXPECT_ERROR(run_on(kBackends[b], computation, KILN_TYPE_S32, 1, kX, 5, 0, got),
                   KILN_STATUS_INVALID_ARGUMENT,
                   "op 'ZeroOutIndex' (custom-call.1) kernel failed on host: preserve_index out of range: 7");
    }
    /* Rank 2 is refused by the kernel too ("ZeroOut expects a 1-D vector."). */
    kiln_computation_destroy(computation);
    computation = NULL;
  }
}

static void plain_custom_call(void* out, const void** in) {
  (void)out;
  (void)in;
}

/* Missing attribute without default; missing kernel for a type; vulkan. */
static void test_definition_errors(void) {
  kiln_user_op_def_t* def = NULL;
  kiln_computation_t* computation = NULL;
  int32_t got[5];
  CHECK_OK(kiln_user_op_def_create("NeedsAttr", &def));
  CHECK_OK(kiln_user_op_def_add_attr(def, "mode: {'apple', 'orange'}"));
  CHECK_OK(kiln_user_op_def_add_attr(def, "T: realnumbertype"));
  CHECK_OK(kiln_user_op_def_add_input(def, "x: T"));
  CHECK_OK(kiln_user_op_def_add_output(def, "y: T"));
  EXPECT_ERROR(kiln_user_op_def_add_attr(def, "mode: int"), KILN_STATUS_ALREADY_EXISTS,
               "attribute 'mode' is defined twice");
  EXPECT_ERROR(kiln_user_op_def_add_attr(def, "a: int >= x"), KILN_STATUS_INVALID_ARGUMENT, "not a number");
  EXPECT_ERROR(kiln_user_op_def_add_attr(def, "b: bogus"), KILN_STATUS_INVALID_ARGUMENT,
               "unknown attribute type 'bogus'");
  EXPECT_ERROR(kiln_user_op_def_add_attr(def, "c: int >= 2 = 1"), KILN_STATUS_INVALID_ARGUMENT,
               "default of NeedsAttr: attribute 'c' is 1, less than its minimum 2");
  EXPECT_ERROR(kiln_user_op_def_add_attr(def, "d: list(int) >= 3 = [1, 2]"), KILN_STATUS_INVALID_ARGUMENT,
               "has 2 item(s), fewer than its minimum 3");
  EXPECT_ERROR(kiln_user_op_def_add_input(def, "no type"), KILN_STATUS_INVALID_ARGUMENT,
               "needs the form 'name: type'");
  CHECK_OK(kiln_user_op_register(def));
  EXPECT_ERROR(kiln_user_op_register(def), KILN_STATUS_ALREADY_EXISTS,
               "op 'NeedsAttr' is already registered");
  kiln_user_op_def_destroy(def);
  /* The op's name is taken for plain custom calls too. */
  EXPECT_ERROR(kiln_register_custom_call("NeedsAttr", plain_custom_call), KILN_STATUS_ALREADY_EXISTS,
               "'NeedsAttr' is already registered with another function");
  CHECK_OK(kiln_user_op_register_kernel("NeedsAttr", "cpu", KILN_TYPE_F32, zero_out_kernel, NULL, NULL));
  EXPECT_ERROR(kiln_user_op_register_kernel("NeedsAttr", "cpu", KILN_TYPE_F32, zero_out_kernel, NULL, NULL),
               KILN_STATUS_ALREADY_EXISTS, "already has a cpu kernel for f32");
  EXPECT_ERROR(kiln_user_op_register_kernel("Nobody", "cpu", KILN_TYPE_F32, zero_out_kernel, NULL, NULL),
               KILN_STATUS_NOT_FOUND, "op 'Nobody' is not registered");
  EXPECT_ERROR(
      kiln_user_op_register_kernel("NeedsAttr", "vulkan", KILN_TYPE_F32, zero_out_kernel, NULL, NULL),
      KILN_STATUS_INVALID_ARGUMENT,
      "register a SPIR-V kernel for vulkan with kiln_user_op_register_device_kernel");
  EXPECT_ERROR(kiln_user_op_register_device_kernel("NeedsAttr", "cuda", KILN_TYPE_F32, "x", 1, "main"),
               KILN_STATUS_INVALID_ARGUMENT,
               "op 'NeedsAttr': the cuda kernel is not PTX: it has no .version");
  EXPECT_ERROR(build_call("NeedsAttr", NULL, KILN_TYPE_S32, 1, 5, &computation), KILN_STATUS_INVALID_ARGUMENT,
               "NeedsAttr: attribute 'mode' (mode: {'apple', 'orange'}) is missing and has no default");
  EXPECT_ERROR(build_call("NeedsAttr", "{mode = \"pear\"}", KILN_TYPE_S32, 1, 5, &computation),
               KILN_STATUS_INVALID_ARGUMENT,
               "attribute 'mode' is \"pear\", not one of {\"apple\", \"orange\"}");
  /* A kernel only for cpu and f32: s32 and the interpreter are refused at compile time. */
  CHECK_OK(build_call("NeedsAttr", "{mode = 'apple'}", KILN_TYPE_S32, 1, 5, &computation));
  EXPECT_ERROR(run_on("cpu", computation, KILN_TYPE_S32, 1, kX, 5, 0, got), KILN_STATUS_UNIMPLEMENTED,
               "op 'NeedsAttr' has no cpu kernel for element type s32");
  EXPECT_ERROR(run_on("interpreter", computation, KILN_TYPE_S32, 1, kX, 5, 0, got), KILN_STATUS_UNIMPLEMENTED,
               "op 'NeedsAttr' has no interpreter kernel for element type s32");
  kiln_computation_destroy(computation);
  computation = NULL;
}

/* A shape function that sums the lengths of its operands, and one that refuses. */
static kiln_status_t* concat_shape(kiln_op_call_frame_t* frame) {
  int64_t total = 0;
  size_t i;
  for (i = 0; i < frame->num_args; ++i) total += frame->args[i].dims[0];
  if (frame->num_attrs != 1 || frame->attrs[0].kind != KILN_OP_ATTR_INT || frame->attrs[0].i != 2) {
    return kiln_status_create(KILN_STATUS_INTERNAL, "N is not in the frame");
  }
  if (total > 100) return kiln_status_create(KILN_STATUS_INVALID_ARGUMENT, "too long");
  return kiln_user_op_frame_set_result_dims(frame, 0, &total, 1);
}

static kiln_status_t* concat_kernel(const kiln_op_call_frame_t* frame) {
  char* out = (char*)frame->results[0].data;
  size_t i;
  for (i = 0; i < frame->num_args; ++i) {
    memcpy(out, frame->args[i].data, frame->args[i].byte_size);
    out += frame->args[i].byte_size;
  }
  return NULL;
}

static int g_released = 0;
static void count_release(void* p) {
  (void)p;
  ++g_released;
}

static void test_shape_function_and_hlo_round_trip(void) {
  kiln_user_op_def_t* def = NULL;
  kiln_computation_t* computation = NULL;
  kiln_computation_t* parsed = NULL;
  char* text = NULL;
  int32_t got[10];
  kiln_builder_t* builder = NULL;
  kiln_op_t xs[2];
  int64_t n = 60;
  CHECK_OK(kiln_user_op_def_create("Concat", &def));
  CHECK_OK(kiln_user_op_def_add_attr(def, "N: int >= 2"));
  CHECK_OK(kiln_user_op_def_add_input(def, "x: N * int32"));
  CHECK_OK(kiln_user_op_def_add_output(def, "y: int32"));
  CHECK_OK(kiln_user_op_def_set_shape_fn(def, concat_shape));
  CHECK_OK(kiln_user_op_def_set_user_data(def, &g_released, count_release));
  CHECK_OK(kiln_user_op_register(def));
  kiln_user_op_def_destroy(def);
  CHECK(g_released == 0); /* the registered op holds the user data */
  CHECK_OK(kiln_user_op_register_kernel("Concat", "host", KILN_TYPE_S32, concat_kernel, NULL, NULL));
  /* A list below its minimum N >= 2. */
  EXPECT_ERROR(build_call("Concat", NULL, KILN_TYPE_S32, 1, 5, &computation), KILN_STATUS_INVALID_ARGUMENT,
               "Concat: input 'x' (x: N * int32) has 1 tensor(s), fewer than its minimum 2");
  /* The shape function's error. */
  CHECK_OK(kiln_builder_create("long", &builder));
  xs[0] = kiln_op_parameter(builder, 0, KILN_TYPE_S32, &n, 1, NULL, "a");
  xs[1] = kiln_op_parameter(builder, 1, KILN_TYPE_S32, &n, 1, NULL, "b");
  CHECK(kiln_op_call_registered(builder, "Concat", xs, 2, NULL) == KILN_OP_INVALID);
  EXPECT_ERROR(kiln_builder_first_error(builder), KILN_STATUS_INVALID_ARGUMENT,
               "Concat: shape function: too long");
  kiln_builder_destroy(builder);
  /* Two vectors of 5: a vector of 10, through HLO text and back. */
  CHECK_OK(build_call("Concat", NULL, KILN_TYPE_S32, 2, 5, &computation));
  CHECK_OK(kiln_computation_to_hlo_text(computation, &text));
  CHECK(text != NULL && strstr(text, "s32[10]{0} custom-call(") != NULL);
  CHECK(text != NULL && strstr(text, "custom_call_target=\"Concat\", backend_config=\"{N = 2}\"") != NULL);
  CHECK_OK(kiln_computation_from_hlo_text(text, strlen(text), &parsed));
  if (parsed != NULL) {
    size_t b;
    for (b = 0; b < 2; ++b) {
      static const int32_t want[10] = {5, 4, 3, 2, 1, 5, 4, 3, 2, 1};
      int32_t out[10];
      kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
      kiln_client_t* client = NULL;
      kiln_executable_t* executable = NULL;
      kiln_buffer_t* args[2] = {NULL, NULL};
      kiln_buffer_t* result = NULL;
      size_t count = 0;
      int64_t five = 5;
      options.backend = kBackends[b];
      CHECK_OK(kiln_client_create(&options, &client));
      CHECK_OK(kiln_client_compile(client, parsed, NULL, &executable));
      CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_S32, &five, 1, NULL, kX, sizeof kX, &args[0]));
      CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_S32, &five, 1, NULL, kX, sizeof kX, &args[1]));
      CHECK_OK(kiln_executable_execute(executable, args, 2, NULL, &result, 1, &count));
      CHECK_OK(kiln_buffer_to_host(result, out, sizeof out));
      CHECK(memcmp(out, want, sizeof want) == 0);
      kiln_buffer_destroy(args[0]);
      kiln_buffer_destroy(args[1]);
      kiln_buffer_destroy(result);
      kiln_executable_destroy(executable);
      kiln_client_destroy(client);
    }
    kiln_computation_destroy(parsed);
  }
  kiln_string_destroy(text);
  kiln_computation_destroy(computation);
  (void)got;
}

/* HLO text written by hand: attributes checked at compile time. */
static void test_hlo_text_checked_at_compile(void) {
  static const char kBadAttr[] =
      "HloModule m\n"
      "ENTRY e {\n"
      "  x = s32[5] parameter(0)\n"
      "  ROOT z = s32[5] custom-call(x), custom_call_target=\"ZeroOutIndex\", backend_config={preserve_index "
      "= -2}\n"
      "}\n";
  static const char kBadShape[] =
      "HloModule m\n"
      "ENTRY e {\n"
      "  x = s32[5] parameter(0)\n"
      "  ROOT z = s32[4] custom-call(x), custom_call_target=\"ZeroOut\"\n"
      "}\n";
  static const char kGood[] =
      "HloModule m\n"
      "ENTRY e {\n"
      "  x = s32[5] parameter(0)\n"
      "  ROOT z = s32[5] custom-call(x), custom_call_target=\"ZeroOutIndex\", backend_config={preserve_index "
      "= 4}\n"
      "}\n";
  static const int32_t want[5] = {0, 0, 0, 0, 1};
  kiln_computation_t* computation = NULL;
  int32_t got[5];
  CHECK_OK(kiln_computation_from_hlo_text(kBadAttr, strlen(kBadAttr), &computation));
  EXPECT_ERROR(run_on("cpu", computation, KILN_TYPE_S32, 1, kX, 5, 0, got), KILN_STATUS_INVALID_ARGUMENT,
               "ZeroOutIndex: attribute 'preserve_index' is -2, less than its minimum 0");
  kiln_computation_destroy(computation);
  computation = NULL;
  CHECK_OK(kiln_computation_from_hlo_text(kBadShape, strlen(kBadShape), &computation));
  EXPECT_ERROR(run_on("interpreter", computation, KILN_TYPE_S32, 1, kX, 5, 0, got),
               KILN_STATUS_INVALID_ARGUMENT, "ZeroOut: instruction 'z' has shape s32[4]");
  kiln_computation_destroy(computation);
  computation = NULL;
  CHECK_OK(kiln_computation_from_hlo_text(kGood, strlen(kGood), &computation));
  CHECK_OK(run_on("cpu", computation, KILN_TYPE_S32, 1, kX, 5, 0, got));
  CHECK(memcmp(got, want, sizeof want) == 0);
  kiln_computation_destroy(computation);
}

/* Every attribute kind, defaults included, reaches the kernel's frame. */
static int g_kinds_ok = 0;
static kiln_status_t* kinds_kernel(const kiln_op_call_frame_t* frame) {
  const kiln_op_attr_t* a = frame->attrs;
  int ok = frame->num_attrs == 9;
  ok = ok && strcmp(a[0].name, "s") == 0 && a[0].kind == KILN_OP_ATTR_STRING && strcmp(a[0].s, "foo") == 0;
  ok = ok && a[1].kind == KILN_OP_ATTR_INT && a[1].i == 0;
  ok = ok && a[2].kind == KILN_OP_ATTR_FLOAT && a[2].f == 1.0;
  ok = ok && a[3].kind == KILN_OP_ATTR_BOOL && a[3].i == 1;
  ok = ok && a[4].kind == KILN_OP_ATTR_TYPE && a[4].type == KILN_TYPE_S32;
  ok = ok && a[5].kind == KILN_OP_ATTR_SHAPE && a[5].rank == 2 && a[5].dims[0] == 1 && a[5].dims[1] == 2;
  ok = ok && a[6].kind == KILN_OP_ATTR_TENSOR && a[6].type == KILN_TYPE_S32 && a[6].byte_size == 4 &&
       *(const int32_t*)a[6].data == 5;
  ok = ok && a[7].kind == KILN_OP_ATTR_LIST && a[7].num_items == 0;
  ok = ok && a[8].kind == KILN_OP_ATTR_LIST && a[8].item_kind == KILN_OP_ATTR_INT && a[8].num_items == 4 &&
       a[8].items[3].i == 7;
  g_kinds_ok = ok;
  memcpy(frame->results[0].data, frame->args[0].data, frame->args[0].byte_size);
  return ok ? NULL : kiln_status_create(KILN_STATUS_INTERNAL, "attributes differ");
}

static void test_attribute_defaults_of_every_kind(void) {
  static const char* const specs[] = {"s: string = 'foo'",
                                      "i: int = 0",
                                      "f: float = 1.0",
                                      "b: bool = true",
                                      "ty: type = DT_INT32",
                                      "sh: shape = shape<1, 2>",
                                      "te: tensor = tensor<s32[], [5]>",
                                      "l_empty: list(int) = []",
                                      "l_int: list(int) = [2, 3, 5, 7]"};
  kiln_user_op_def_t* def = NULL;
  kiln_computation_t* computation = NULL;
  char* text = NULL;
  int32_t got[5];
  size_t i;
  CHECK_OK(kiln_user_op_def_create("AttrDefaultExampleForAllTypes", &def));
  for (i = 0; i < sizeof specs / sizeof specs[0]; ++i) CHECK_OK(kiln_user_op_def_add_attr(def, specs[i]));
  CHECK_OK(kiln_user_op_def_add_input(def, "x: int32"));
  CHECK_OK(kiln_user_op_def_add_output(def, "y: int32"));
  CHECK_OK(kiln_user_op_register(def));
  kiln_user_op_def_destroy(def);
  CHECK_OK(kiln_user_op_register_kernel("AttrDefaultExampleForAllTypes", "host", KILN_TYPE_INVALID,
                                        kinds_kernel, NULL, NULL));
  CHECK_OK(build_call("AttrDefaultExampleForAllTypes", NULL, KILN_TYPE_S32, 1, 5, &computation));
  CHECK_OK(kiln_computation_to_hlo_text(computation, &text));
  CHECK(text != NULL &&
        strstr(text,
               "backend_config=\"{s = \\\"foo\\\", i = 0, f = 1.0, b = true, ty = s32, sh = shape<1,2>, "
               "te = tensor<s32[], [5]>, l_empty = [], l_int = [2, 3, 5, 7]}\"") != NULL);
  if (text != NULL && g_failures > 0) fprintf(stderr, "%s", text);
  kiln_string_destroy(text);
  CHECK_OK(run_on("interpreter", computation, KILN_TYPE_S32, 1, kX, 5, 0, got));
  CHECK(g_kinds_ok);
  kiln_computation_destroy(computation);
  /* The registry's description, as kiln info --ops prints it. */
  CHECK_OK(kiln_user_op_registry_describe(&text));
  CHECK(text != NULL && strstr(text, "ZeroOutIndex(to_zero: int32) -> (zeroed: int32)") != NULL);
  CHECK(text != NULL && strstr(text, "attr preserve_index: int >= 0 = 0") != NULL);
  CHECK(text != NULL && strstr(text, "kernels: cpu:s32, interpreter:s32") != NULL);
  kiln_string_destroy(text);
}

/* vulkan and cuda refuse by name a registered op without a device kernel
 * there (tests/device_user_ops runs ones with kernels), where this machine
 * has them. */
static void test_gpu_backends_refuse(void) {
  static const char* const gpus[2] = {"vulkan", "cuda"};
  size_t g;
  for (g = 0; g < 2; ++g) {
    kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
    kiln_client_t* client = NULL;
    kiln_computation_t* computation = NULL;
    kiln_executable_t* executable = NULL;
    kiln_status_t* status;
    options.backend = gpus[g];
    status = kiln_client_create(&options, &client);
    if (status != NULL) { /* not in this build or not on this machine */
      kiln_status_destroy(status);
      continue;
    }
    CHECK_OK(build_call("ZeroOut", NULL, KILN_TYPE_S32, 1, 5, &computation));
    status = kiln_client_compile(client, computation, NULL, &executable);
    CHECK(strstr(kiln_status_message(status), gpus[g]) != NULL);
    EXPECT_ERROR(status, KILN_STATUS_UNIMPLEMENTED, "op 'ZeroOut' has no ");
    kiln_executable_destroy(executable);
    kiln_computation_destroy(computation);
    kiln_client_destroy(client);
  }
}

/* The loss sum_j dot(op(x_0, ..., x_{num-1})[j], w) over f32[5] parameters,
 * differentiated with respect to parameter 0 and run on `backend`: the
 * loss to *loss and d loss / d x_0 to grad. */
static const float kW[5] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
static kiln_status_t* grad_of(const char* backend, const char* op, const char* attrs, size_t num, float* loss,
                              float* grad) {
  kiln_builder_t* builder = NULL;
  kiln_computation_t* computation = NULL;
  kiln_computation_t* gradient = NULL;
  kiln_op_t xs[2], call, w, total;
  int64_t n = 5, wrt = 0;
  size_t i;
  kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
  kiln_client_t* client = NULL;
  kiln_executable_t* executable = NULL;
  kiln_buffer_t* args[2] = {NULL, NULL};
  kiln_buffer_t* results[2] = {NULL, NULL};
  size_t num_results = 0;
  kiln_status_t* status = kiln_builder_create("loss", &builder);
  if (status != NULL) return status;
  for (i = 0; i < num; ++i) xs[i] = kiln_op_parameter(builder, (int64_t)i, KILN_TYPE_F32, &n, 1, NULL, "x");
  call = kiln_op_call_registered(builder, op, xs, num, attrs);
  w = kiln_op_constant(builder, KILN_TYPE_F32, &n, 1, kW, sizeof kW);
  total = kiln_op_constant_f32(builder, 0.0f);
  for (i = 0; i < num; ++i) {
    kiln_op_t out = num == 1 ? call : kiln_op_get_tuple_element(builder, call, (int64_t)i);
    total = kiln_op_add(builder, total, kiln_op_dot(builder, out, w), NULL, 0);
  }
  status = kiln_builder_build(builder, total, &computation);
  kiln_builder_destroy(builder);
  if (status == NULL) status = kiln_computation_value_and_grad(computation, &wrt, 1, &gradient);
  kiln_computation_destroy(computation);
  options.backend = backend;
  if (status == NULL) status = kiln_client_create(&options, &client);
  if (status == NULL) status = kiln_client_compile(client, gradient, NULL, &executable);
  for (i = 0; status == NULL && i < num; ++i) {
    status = kiln_client_buffer_from_host(client, KILN_TYPE_F32, &n, 1, NULL, kXf, sizeof kXf, &args[i]);
  }
  if (status == NULL) status = kiln_executable_execute(executable, args, num, NULL, results, 2, &num_results);
  if (status == NULL) status = kiln_buffer_to_host(results[0], loss, sizeof *loss);
  if (status == NULL) status = kiln_buffer_to_host(results[1], grad, 5 * sizeof *grad);
  for (i = 0; i < 2; ++i) {
    kiln_buffer_destroy(args[i]);
    kiln_buffer_destroy(results[i]);
  }
  kiln_executable_destroy(executable);
  kiln_client_destroy(client);
  kiln_computation_destroy(gradient);
  return status;
}

static kiln_status_t* failing_grad(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                   const kiln_op_t* outputs, const kiln_op_t* output_grads,
                                   size_t num_outputs, const kiln_op_attr_t* attrs, size_t num_attrs,
                                   kiln_op_t* operand_grads, void* user_data) {
  (void)builder, (void)operands, (void)num_operands, (void)outputs, (void)output_grads, (void)num_outputs;
  (void)attrs, (void)num_attrs, (void)operand_grads, (void)user_data;
  return kiln_status_create(KILN_STATUS_FAILED_PRECONDITION, "no gradient on Thursdays");
}

/* A cotangent of the wrong shape (a scalar for a vector). */
static kiln_status_t* scalar_grad(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                  const kiln_op_t* outputs, const kiln_op_t* output_grads, size_t num_outputs,
                                  const kiln_op_attr_t* attrs, size_t num_attrs, kiln_op_t* operand_grads,
                                  void* user_data) {
  (void)operands, (void)num_operands, (void)outputs, (void)output_grads, (void)num_outputs;
  (void)attrs, (void)num_attrs, (void)user_data;
  operand_grads[0] = kiln_op_constant_f32(builder, 1.0f);
  return NULL;
}

/* No gradient at all: every operand_grads entry left unfilled (zero). */
static kiln_status_t* zero_grad(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                const kiln_op_t* outputs, const kiln_op_t* output_grads, size_t num_outputs,
                                const kiln_op_attr_t* attrs, size_t num_attrs, kiln_op_t* operand_grads,
                                void* user_data) {
  (void)builder, (void)operands, (void)num_operands, (void)outputs, (void)output_grads, (void)num_outputs;
  (void)attrs, (void)num_attrs, (void)operand_grads, (void)user_data;
  return NULL;
}

/* ZeroOut's gradient (the seed's RegisterGradient): the output cotangent at
 * the preserved position only, through kiln_computation_value_and_grad. */
static void test_gradient(void) {
  static const kiln_element_type_t f32_only[] = {KILN_TYPE_F32, KILN_TYPE_INVALID};
  static const char* const index_attrs[] = {"preserve_index: int >= 0 = 0", "T: {float}", NULL};
  static const float first[5] = {1, 0, 0, 0, 0};
  static const float third[5] = {0, 0, 0, 4, 0};
  static const float zero[5] = {0, 0, 0, 0, 0};
  size_t b;
  float loss = 0, grad[5];
  CHECK_OK(zero_out_define("ZeroOutIndexGrad", index_attrs, "to_zero: T", "zeroed: T", f32_only,
                           "ZeroOutIndex for floats, with a gradient.", zero_out_grad));
  CHECK_OK(zero_out_define("ZeroOutNoGrad", NULL, "to_zero: float", "zeroed: float", f32_only, "", NULL));
  CHECK_OK(
      zero_out_define("ZeroOutBadGrad", NULL, "to_zero: float", "zeroed: float", f32_only, "", failing_grad));
  CHECK_OK(zero_out_define("ZeroOutScalarGrad", NULL, "to_zero: float", "zeroed: float", f32_only, "",
                           scalar_grad));
  CHECK_OK(
      zero_out_define("ZeroOutZeroGrad", NULL, "to_zero: float", "zeroed: float", f32_only, "", zero_grad));
  for (b = 0; b < 2; ++b) {
    memset(grad, 0xff, sizeof grad);
    CHECK_OK(grad_of(kBackends[b], "ZeroOutPoly", NULL, 1, &loss, grad));
    CHECK(loss == 1.5f && memcmp(grad, first, sizeof grad) == 0);
    memset(grad, 0xff, sizeof grad);
    CHECK_OK(grad_of(kBackends[b], "ZeroOutIndexGrad", "{preserve_index = 3}", 1, &loss, grad));
    CHECK(loss == 18.0f && memcmp(grad, third, sizeof grad) == 0);
    /* Two outputs (a tuple): x_0 reaches the loss through output 0 only. */
    memset(grad, 0xff, sizeof grad);
    CHECK_OK(grad_of(kBackends[b], "ZeroOutList", NULL, 2, &loss, grad));
    CHECK(loss == 3.0f && memcmp(grad, first, sizeof grad) == 0);
    memset(grad, 0xff, sizeof grad);
    CHECK_OK(grad_of(kBackends[b], "ZeroOutZeroGrad", NULL, 1, &loss, grad));
    CHECK(memcmp(grad, zero, sizeof grad) == 0);
    if (g_failures > 0) {
      fprintf(stderr, "%s: grad [%g %g %g %g %g], loss %g\n", kBackends[b], grad[0], grad[1], grad[2],
              grad[3], grad[4], loss);
    }
  }
  EXPECT_ERROR(grad_of("cpu", "ZeroOutNoGrad", NULL, 1, &loss, grad), KILN_STATUS_INVALID_ARGUMENT,
               "op 'ZeroOutNoGrad' (instruction custom-call.");
  EXPECT_ERROR(grad_of("cpu", "ZeroOutNoGrad", NULL, 1, &loss, grad), KILN_STATUS_INVALID_ARGUMENT,
               "has no gradient registered; set one with kiln_user_op_def_set_grad_fn");
  EXPECT_ERROR(grad_of("cpu", "ZeroOutBadGrad", NULL, 1, &loss, grad), KILN_STATUS_FAILED_PRECONDITION,
               "op 'ZeroOutBadGrad'");
  EXPECT_ERROR(grad_of("cpu", "ZeroOutBadGrad", NULL, 1, &loss, grad), KILN_STATUS_FAILED_PRECONDITION,
               "the gradient function failed: no gradient on Thursdays");
  EXPECT_ERROR(grad_of("interpreter", "ZeroOutScalarGrad", NULL, 1, &loss, grad),
               KILN_STATUS_INVALID_ARGUMENT, "op 'ZeroOutScalarGrad'");
  EXPECT_ERROR(grad_of("interpreter", "ZeroOutScalarGrad", NULL, 1, &loss, grad),
               KILN_STATUS_INVALID_ARGUMENT,
               "gave operand 0 a cotangent of shape f32[], not the operand's shape f32[5]");
}

/* ScaleByInt(x: float, k: int32) -> y = x * k (k a scalar): its gradient
 * fills a cotangent for the integer operand too, which autodiff drops. */
static kiln_status_t* scale_kernel(const kiln_op_call_frame_t* frame) {
  const float* x = (const float*)frame->args[0].data;
  int32_t k = *(const int32_t*)frame->args[1].data;
  float* y = (float*)frame->results[0].data;
  size_t i;
  for (i = 0; i < frame->results[0].byte_size / 4; ++i) y[i] = x[i] * (float)k;
  return NULL;
}

static kiln_status_t* scale_grad(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                 const kiln_op_t* outputs, const kiln_op_t* output_grads, size_t num_outputs,
                                 const kiln_op_attr_t* attrs, size_t num_attrs, kiln_op_t* operand_grads,
                                 void* user_data) {
  (void)num_operands, (void)outputs, (void)num_outputs, (void)attrs, (void)num_attrs, (void)user_data;
  operand_grads[0] =
      kiln_op_mul(builder, output_grads[0], kiln_op_convert(builder, operands[1], KILN_TYPE_F32), NULL, 0);
  operand_grads[1] = operands[1];
  return NULL;
}

static void test_gradient_integer_operand(void) {
  kiln_user_op_def_t* def = NULL;
  size_t b;
  CHECK_OK(kiln_user_op_def_create("ScaleByInt", &def));
  CHECK_OK(kiln_user_op_def_add_input(def, "x: float"));
  CHECK_OK(kiln_user_op_def_add_input(def, "k: int32"));
  CHECK_OK(kiln_user_op_def_add_output(def, "y: float"));
  CHECK_OK(kiln_user_op_def_set_grad_fn(def, scale_grad));
  CHECK_OK(kiln_user_op_register(def));
  kiln_user_op_def_destroy(def);
  CHECK_OK(kiln_user_op_register_kernel("ScaleByInt", "host", KILN_TYPE_F32, scale_kernel, NULL, NULL));
  for (b = 0; b < 2; ++b) {
    static const float want[5] = {3, 6, 9, 12, 15};
    kiln_builder_t* builder = NULL;
    kiln_computation_t *loss = NULL, *gradient = NULL;
    kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
    kiln_client_t* client = NULL;
    kiln_executable_t* executable = NULL;
    kiln_buffer_t *x = NULL, *results[2] = {NULL, NULL};
    kiln_op_t args[2];
    int64_t n = 5, wrt = 0;
    size_t count = 0;
    float value = 0, dx[5] = {0};
    CHECK_OK(kiln_builder_create("scaled", &builder));
    args[0] = kiln_op_parameter(builder, 0, KILN_TYPE_F32, &n, 1, NULL, "x");
    args[1] = kiln_op_constant_s32(builder, 3);
    CHECK_OK(
        kiln_builder_build(builder,
                           kiln_op_dot(builder, kiln_op_call_registered(builder, "ScaleByInt", args, 2, NULL),
                                       kiln_op_constant(builder, KILN_TYPE_F32, &n, 1, kW, sizeof kW)),
                           &loss));
    kiln_builder_destroy(builder);
    CHECK_OK(kiln_computation_value_and_grad(loss, &wrt, 1, &gradient));
    options.backend = kBackends[b];
    CHECK_OK(kiln_client_create(&options, &client));
    CHECK_OK(kiln_client_compile(client, gradient, NULL, &executable));
    CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_F32, &n, 1, NULL, kXf, sizeof kXf, &x));
    CHECK_OK(kiln_executable_execute(executable, &x, 1, NULL, results, 2, &count));
    CHECK_OK(kiln_buffer_to_host(results[0], &value, sizeof value));
    CHECK_OK(kiln_buffer_to_host(results[1], dx, sizeof dx));
    CHECK(value == 3.0f * (1.5f + 5.0f + 10.5f + 18.0f + 27.5f) && memcmp(dx, want, sizeof dx) == 0);
    kiln_buffer_destroy(x);
    kiln_buffer_destroy(results[0]);
    kiln_buffer_destroy(results[1]);
    kiln_executable_destroy(executable);
    kiln_client_destroy(client);
    kiln_computation_destroy(gradient);
    kiln_computation_destroy(loss);
  }
}

/* Cube(x: float) = x^3, with a gradient built of differentiable ops
 * (3 x^2 dy), so its gradient can be differentiated again. */
static kiln_status_t* cube_kernel(const kiln_op_call_frame_t* frame) {
  const float* x = (const float*)frame->args[0].data;
  float* y = (float*)frame->results[0].data;
  size_t i;
  for (i = 0; i < frame->results[0].byte_size / 4; ++i) y[i] = x[i] * x[i] * x[i];
  return NULL;
}

static kiln_status_t* cube_grad(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                const kiln_op_t* outputs, const kiln_op_t* output_grads, size_t num_outputs,
                                const kiln_op_attr_t* attrs, size_t num_attrs, kiln_op_t* operand_grads,
                                void* user_data) {
  kiln_op_t square = kiln_op_mul(builder, operands[0], operands[0], NULL, 0);
  kiln_op_t three_square = kiln_op_mul(builder, kiln_op_constant_f32(builder, 3.0f), square, NULL, 0);
  (void)num_operands, (void)outputs, (void)num_outputs, (void)attrs, (void)num_attrs, (void)user_data;
  operand_grads[0] = kiln_op_mul(builder, three_square, output_grads[0], NULL, 0);
  return NULL;
}

/* Grad of grad through a registered op: G = value_and_grad of loss(x) =
 * dot(Cube(x), w) returns (loss, 3 x^2 w); the VJP of G with cotangents
 * (c, v) gives c * 3 x^2 w + 6 x w v, which needs Cube's gradient for the
 * forward call inside G and the derivative of the gradient it built. */
static void test_grad_of_grad(void) {
  static const float x[5] = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f};
  static const float v[5] = {1.0f, -1.0f, 2.0f, 0.0f, 4.0f};
  const float c = 2.0f;
  kiln_user_op_def_t* def = NULL;
  kiln_builder_t* builder = NULL;
  kiln_computation_t *loss = NULL, *gradient = NULL, *second = NULL;
  int64_t n = 5, wrt = 0, scalar = 0;
  size_t b, i;
  kiln_op_t p;
  CHECK_OK(kiln_user_op_def_create("Cube", &def));
  CHECK_OK(kiln_user_op_def_add_input(def, "x: float"));
  CHECK_OK(kiln_user_op_def_add_output(def, "y: float"));
  CHECK_OK(kiln_user_op_def_set_grad_fn(def, cube_grad));
  CHECK_OK(kiln_user_op_register(def));
  kiln_user_op_def_destroy(def);
  CHECK_OK(kiln_user_op_register_kernel("Cube", "host", KILN_TYPE_F32, cube_kernel, NULL, NULL));
  CHECK_OK(kiln_builder_create("cube_loss", &builder));
  p = kiln_op_parameter(builder, 0, KILN_TYPE_F32, &n, 1, NULL, "x");
  CHECK_OK(kiln_builder_build(builder,
                              kiln_op_dot(builder, kiln_op_call_registered(builder, "Cube", &p, 1, NULL),
                                          kiln_op_constant(builder, KILN_TYPE_F32, &n, 1, kW, sizeof kW)),
                              &loss));
  kiln_builder_destroy(builder);
  CHECK_OK(kiln_computation_value_and_grad(loss, &wrt, 1, &gradient));
  CHECK_OK(kiln_computation_vjp(gradient, &wrt, 1, &second));
  for (b = 0; second != NULL && b < 2; ++b) {
    kiln_client_options_t options = KILN_CLIENT_OPTIONS_INIT;
    kiln_client_t* client = NULL;
    kiln_executable_t* executable = NULL;
    kiln_buffer_t* args[3] = {NULL, NULL, NULL};
    kiln_buffer_t* results[3] = {NULL, NULL, NULL};
    size_t num_results = 0;
    float got[5] = {0}, first[5] = {0};
    options.backend = kBackends[b];
    CHECK_OK(kiln_client_create(&options, &client));
    CHECK_OK(kiln_client_compile(client, second, NULL, &executable));
    CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_F32, &n, 1, NULL, x, sizeof x, &args[0]));
    CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_F32, &scalar, 0, NULL, &c, sizeof c, &args[1]));
    CHECK_OK(kiln_client_buffer_from_host(client, KILN_TYPE_F32, &n, 1, NULL, v, sizeof v, &args[2]));
    CHECK_OK(kiln_executable_execute(executable, args, 3, NULL, results, 3, &num_results));
    CHECK(num_results == 3);
    if (num_results == 3) {
      CHECK_OK(kiln_buffer_to_host(results[1], first, sizeof first));
      CHECK_OK(kiln_buffer_to_host(results[2], got, sizeof got));
    }
    for (i = 0; i < 5; ++i) {
      /* Every value is a small dyadic rational: exact in f32. */
      const float want_first = 3.0f * x[i] * x[i] * kW[i];
      const float want = c * want_first + 6.0f * x[i] * kW[i] * v[i];
      if (first[i] != want_first || got[i] != want) {
        fprintf(stderr,
                "grad of grad of Cube on %s, element %zu: gradient %g (want %g), second %g (want %g)\n",
                kBackends[b], i, first[i], want_first, got[i], want);
        ++g_failures;
      }
    }
    for (i = 0; i < 3; ++i) {
      kiln_buffer_destroy(args[i]);
      kiln_buffer_destroy(results[i]);
    }
    kiln_executable_destroy(executable);
    kiln_client_destroy(client);
  }
  kiln_computation_destroy(second);
  kiln_computation_destroy(gradient);
  kiln_computation_destroy(loss);
}

int main(void) {
  CHECK_OK(register_zero_out_ops());
  EXPECT_ERROR(register_zero_out_ops(), KILN_STATUS_ALREADY_EXISTS, "op 'ZeroOut' is already registered");
  test_zero_out_versions();
  test_call_errors();
  test_definition_errors();
  test_shape_function_and_hlo_round_trip();
  test_hlo_text_checked_at_compile();
  test_attribute_defaults_of_every_kind();
  test_gpu_backends_refuse();
  test_gradient();
  test_gradient_integer_operand();
  test_grad_of_grad();
  if (g_failures != 0) {
    fprintf(stderr, "%d failure(s)\n", g_failures);
    return 1;
  }
  printf("capi user ops test: all passed\n");
  return 0;
}
