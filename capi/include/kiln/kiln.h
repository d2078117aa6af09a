/*
 * kiln.h: the C ABI of Kiln, an XLA-style array compiler and runtime.
 *
 * This is the only public header. It is plain C (C99 and later, and C++).
 *
 * Conventions, shared by every function below:
 *  - Every symbol starts with `kiln_`, every type with `kiln_` and ends in `_t`,
 *    every constant starts with `KILN_`.
 *  - Objects are opaque handles. Each object that a call creates has exactly one
 *    destroy function; destroying NULL does nothing.
 *  - A fallible call returns `kiln_status_t*`: NULL means success; otherwise the
 *    caller owns the status and frees it with kiln_status_destroy(). Results come
 *    back through out-parameters (last in the argument list), which a failing call
 *    leaves untouched. A failing call leaks nothing.
 *  - A NULL handle or pointer where one is required is INVALID_ARGUMENT, and the
 *    message names the parameter.
 *  - Option and description structs start with `size_t struct_size`: initialise
 *    them with their *_INIT macro (or set struct_size = sizeof(the struct)).
 *    New fields are only ever appended, and each struct's size in the first
 *    header that had it is frozen: a program built against an older kiln.h
 *    passes its smaller struct_size and the fields it lacks take their
 *    defaults (those of the *_INIT macro); a larger one (a newer header) is
 *    accepted and its extra fields ignored. A struct_size below the struct's
 *    first version is INVALID_ARGUMENT.
 *  - No C++ exception, abort or thread-local "last error": everything that can go
 *    wrong is reported through the returned status.
 *  - Builder ops are the exception to "return a status": they return a `kiln_op_t`
 *    handle; the first failing op makes the builder's error sticky (query it at
 *    once with kiln_builder_first_error(), or get it from kiln_builder_build()),
 *    and every later op returns KILN_OP_INVALID.
 *
 * Threads: a client, a computation, an executable and a buffer may be used from
 * several threads at once (an executable may run concurrently; buffer reads are
 * safe). A builder may not: use one builder from one thread at a time.
 *
 * Lifetimes: executables and buffers made from a client keep what they need of
 * it alive, so they may be destroyed before or after the client.
 */
#ifndef KILN_KILN_H_
#define KILN_KILN_H_

#include <stddef.h>
#include <stdint.h>

/* Version of this header; kiln_version() reports the library's. CMake checks that
 * these match the project version. */
#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 2
#define KILN_VERSION_PATCH 0
/* major * 10000 + minor * 100 + patch. */
#define KILN_VERSION_NUMBER (KILN_VERSION_MAJOR * 10000 + KILN_VERSION_MINOR * 100 + KILN_VERSION_PATCH)

#if defined(__GNUC__) || defined(__clang__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Versions                                                                  */
/* ------------------------------------------------------------------------- */

/* The library's version as "MAJOR.MINOR.PATCH". The string is static: never freed,
 * valid for the life of the process. Thread-safe. */
KILN_API const char* kiln_version(void);

/* The library's version as KILN_VERSION_NUMBER computes it. Thread-safe. */
KILN_API uint32_t kiln_version_number(void);

/* ------------------------------------------------------------------------- */
/* Status                                                                    */
/* ------------------------------------------------------------------------- */

/* A failure: a code and a message. NULL means success. */
typedef struct kiln_status_t kiln_status_t;

/* Stable numeric status codes (the canonical set). */
typedef int32_t kiln_status_code_t;
enum {
  KILN_STATUS_OK = 0,
  KILN_STATUS_CANCELLED = 1,
  KILN_STATUS_UNKNOWN = 2,
  KILN_STATUS_INVALID_ARGUMENT = 3,
  KILN_STATUS_DEADLINE_EXCEEDED = 4,
  KILN_STATUS_NOT_FOUND = 5,
  KILN_STATUS_ALREADY_EXISTS = 6,
  KILN_STATUS_PERMISSION_DENIED = 7,
  KILN_STATUS_RESOURCE_EXHAUSTED = 8,
  KILN_STATUS_FAILED_PRECONDITION = 9,
  KILN_STATUS_ABORTED = 10,
  KILN_STATUS_OUT_OF_RANGE = 11,
  KILN_STATUS_UNIMPLEMENTED = 12,
  KILN_STATUS_INTERNAL = 13,
  KILN_STATUS_UNAVAILABLE = 14,
  KILN_STATUS_DATA_LOSS = 15
};

/* The code of `status`; KILN_STATUS_OK for NULL. */
KILN_API kiln_status_code_t kiln_status_code(const kiln_status_t* status);

/* The UTF-8 message of `status` ("" for NULL). The string is owned by `status` and
 * valid until it is destroyed. */
KILN_API const char* kiln_status_message(const kiln_status_t* status);

/* Upper-case name of a code ("INVALID_ARGUMENT"); "UNKNOWN_CODE" for values outside
 * the set. The string is static. */
KILN_API const char* kiln_status_code_name(kiln_status_code_t code);

/* Frees a status. NULL is a no-op. */
KILN_API void kiln_status_destroy(kiln_status_t* status);

/* Frees a string the library returned for the caller to own (see
 * kiln_computation_to_hlo_text). NULL is a no-op. */
KILN_API void kiln_string_destroy(char* string);

/* ------------------------------------------------------------------------- */
/* Element types and enums                                                   */
/* ------------------------------------------------------------------------- */

/* Element types as XLA names them. PRED is one byte (0 or 1); F16 and BF16 are
 * 16-bit bit patterns; C64/C128 are pairs (real, imaginary) of F32/F64. */
typedef int32_t kiln_element_type_t;
enum {
  KILN_TYPE_INVALID = 0,
  KILN_TYPE_PRED = 1,
  KILN_TYPE_S8 = 2,
  KILN_TYPE_S16 = 3,
  KILN_TYPE_S32 = 4,
  KILN_TYPE_S64 = 5,
  KILN_TYPE_U8 = 6,
  KILN_TYPE_U16 = 7,
  KILN_TYPE_U32 = 8,
  KILN_TYPE_U64 = 9,
  KILN_TYPE_F16 = 10,
  KILN_TYPE_BF16 = 11,
  KILN_TYPE_F32 = 12,
  KILN_TYPE_F64 = 13,
  KILN_TYPE_C64 = 14,
  KILN_TYPE_C128 = 15,
  KILN_TYPE_TUPLE = 16,
  KILN_TYPE_TOKEN = 17
};

/* Lower-case HLO name of an element type ("f32"); "invalid" for unknown values.
 * The string is static. Thread-safe. */
KILN_API const char* kiln_element_type_name(kiln_element_type_t type);

/* Bytes per element of an array element type; 0 for tuple, token and invalid. */
KILN_API size_t kiln_element_type_byte_width(kiln_element_type_t type);

/* Directions of kiln_op_compare. */
typedef int32_t kiln_comparison_direction_t;
enum {
  KILN_COMPARE_EQ = 0,
  KILN_COMPARE_NE = 1,
  KILN_COMPARE_GE = 2,
  KILN_COMPARE_GT = 3,
  KILN_COMPARE_LE = 4,
  KILN_COMPARE_LT = 5
};

/* Comparison types of kiln_op_compare; DEFAULT picks by element type. */
typedef int32_t kiln_comparison_type_t;
enum {
  KILN_COMPARISON_TYPE_DEFAULT = 0,
  KILN_COMPARISON_TYPE_FLOAT = 1,
  KILN_COMPARISON_TYPE_TOTAL_ORDER = 2,
  KILN_COMPARISON_TYPE_SIGNED = 3,
  KILN_COMPARISON_TYPE_UNSIGNED = 4
};

/* Padding schemes of the seed's Conv, ReduceWindow and SelectAndScatter. */
typedef int32_t kiln_padding_t;
enum { KILN_PADDING_VALID = 0, KILN_PADDING_SAME = 1 };

/* Algorithms of kiln_op_rng_bit_generator. */
typedef int32_t kiln_rng_algorithm_t;
enum { KILN_RNG_DEFAULT = 0, KILN_RNG_THREE_FRY = 1, KILN_RNG_PHILOX = 2 };

/* Transforms of kiln_op_fft, numbered as XLA's FftType. (Since 0.2.) */
typedef int32_t kiln_fft_type_t;
enum { KILN_FFT_FFT = 0, KILN_FFT_IFFT = 1, KILN_FFT_RFFT = 2, KILN_FFT_IRFFT = 3 };

/* ------------------------------------------------------------------------- */
/* Backends, clients and devices                                             */
/* ------------------------------------------------------------------------- */

/* Number of backends this library contains. Thread-safe. */
KILN_API kiln_status_t* kiln_backend_count(size_t* out_count);

/* Name of backend `index` ("interpreter", "cpu", ...). The string is owned by the
 * library and valid for the life of the process. */
KILN_API kiln_status_t* kiln_backend_name(size_t index, const char** out_name);

/* A client: one backend and its devices. Thread-safe. */
typedef struct kiln_client_t kiln_client_t;

typedef struct kiln_client_options_t {
  size_t struct_size;
  /* Backend name; NULL means "cpu" when this build has it, else "interpreter".
   * An empty string is INVALID_ARGUMENT. Copied during kiln_client_create. */
  const char* backend;
  /* (Since 0.2.) How many devices the client presents. 0 = the backend's own
   * count (one for "cpu" and "interpreter", each physical GPU for the GPU
   * backends). The host backends ("cpu", "interpreter") split the machine into
   * this many devices (at most 64), which share its cores and memory: several
   * devices in one process, for programs written for multi-device work. A GPU
   * backend accepts only 0 or its physical count (else INVALID_ARGUMENT). */
  int32_t num_devices;
} kiln_client_options_t;

#define KILN_CLIENT_OPTIONS_INIT {sizeof(kiln_client_options_t), NULL, 0}

/* Creates a client. `options` may be NULL (defaults). An unknown backend is
 * NOT_FOUND; one that cannot run on this machine is UNAVAILABLE. The caller owns
 * *out_client and frees it with kiln_client_destroy. */
KILN_API kiln_status_t* kiln_client_create(const kiln_client_options_t* options, kiln_client_t** out_client);

/* Frees a client. Its executables and buffers stay valid until they are
 * destroyed themselves. NULL is a no-op. */
KILN_API void kiln_client_destroy(kiln_client_t* client);

/* The client's backend name. The string is owned by `client` and lives as long. */
KILN_API kiln_status_t* kiln_client_backend_name(const kiln_client_t* client, const char** out_name);

/* Number of devices of the client's backend. */
KILN_API kiln_status_t* kiln_client_device_count(const kiln_client_t* client, size_t* out_count);

/* Description of device `index` (OUT_OF_RANGE past the end). The string is owned by
 * `client` and lives as long. */
KILN_API kiln_status_t* kiln_client_device_description(const kiln_client_t* client, size_t index,
                                                       const char** out_description);

/* A device of a client: where buffers live and executables run. The library
 * owns device handles: they stay valid while the client, or any buffer or
 * executable made through it, lives, and are never destroyed by the caller.
 * Equal devices have equal handles. Thread-safe. (Since 0.2.) */
typedef struct kiln_device_t kiln_device_t;

/* Device `index` (< kiln_client_device_count, else OUT_OF_RANGE) of `client`. */
KILN_API kiln_status_t* kiln_client_device(const kiln_client_t* client, size_t index,
                                           kiln_device_t** out_device);

/* The device's position in its client's list (what kiln_client_device takes). */
KILN_API kiln_status_t* kiln_device_index(const kiln_device_t* device, size_t* out_index);

/* The device's description, as kiln_client_device_description gives it. The
 * string lives as long as the device handle. */
KILN_API kiln_status_t* kiln_device_description(const kiln_device_t* device, const char** out_description);

/* Queues a host array for the next `infeed` op executed by this client's
 * executables (FIFO). `data` holds `byte_size` bytes of the array in row-major
 * order and is copied before the call returns. Thread-safe. */
KILN_API kiln_status_t* kiln_client_transfer_to_infeed(kiln_client_t* client, kiln_element_type_t type,
                                                       const int64_t* dims, size_t rank, const void* data,
                                                       size_t byte_size);

/* ------------------------------------------------------------------------- */
/* Custom calls                                                              */
/* ------------------------------------------------------------------------- */

/* A custom-call target: `out` points at the result's dense row-major data (for a
 * tuple result, at an array of pointers to the leaves' data); `in[i]` at operand
 * i's. It must not throw or longjmp. */
typedef void (*kiln_custom_call_fn)(void* out, const void** in);

/* Registers `fn` as the process-wide custom-call target `name` (copied).
 * Re-registering the same function is fine; another function under a taken name
 * is ALREADY_EXISTS. Thread-safe. */
KILN_API kiln_status_t* kiln_register_custom_call(const char* name, kiln_custom_call_fn fn);

/* ------------------------------------------------------------------------- */
/* Builder                                                                   */
/* ------------------------------------------------------------------------- */

/* Builds one computation op by op. Not thread-safe. */
typedef struct kiln_builder_t kiln_builder_t;
/* A built (or parsed) computation: a module with an entry. Immutable; thread-safe. */
typedef struct kiln_computation_t kiln_computation_t;

/* An op of one builder, valid only with the builder that made it. The value is
 * opaque (it is not an index): each handle carries a tag of its builder, so an
 * op of another builder, of a destroyed builder, or a made-up value is
 * INVALID_ARGUMENT naming the argument, the op and the builders. Handles are
 * never negative; KILN_OP_INVALID is what a failed op returns. One builder
 * holds at most 2^32 - 1 ops (more is RESOURCE_EXHAUSTED). */
typedef int64_t kiln_op_t;
#define KILN_OP_INVALID ((kiln_op_t) - 1)

/* Creates a builder for a computation named `name` (copied). The caller owns
 * *out_builder and frees it with kiln_builder_destroy. */
KILN_API kiln_status_t* kiln_builder_create(const char* name, kiln_builder_t** out_builder);

/* Frees a builder. Computations it built stay valid. NULL is a no-op. */
KILN_API void kiln_builder_destroy(kiln_builder_t* builder);

/* The builder's first error, or NULL while every op so far succeeded. The caller
 * owns the returned status (a copy). */
KILN_API kiln_status_t* kiln_builder_first_error(const kiln_builder_t* builder);

/* The shape of `op`: element type, and its dimensions written to dims[0..rank).
 * `dims` may be NULL when `dims_capacity` is 0 (to ask for the rank); a capacity
 * smaller than the rank is INVALID_ARGUMENT. A tuple reports KILN_TYPE_TUPLE and
 * rank 0. Out-params may be NULL when not wanted. */
KILN_API kiln_status_t* kiln_builder_get_shape(const kiln_builder_t* builder, kiln_op_t op,
                                               kiln_element_type_t* out_type, int64_t* dims,
                                               size_t dims_capacity, size_t* out_rank);

/* Builds and verifies the computation rooted at `root` (KILN_OP_INVALID: the last
 * op added). Returns the builder's first error if any. The builder stays usable.
 * The caller owns *out_computation; free it with kiln_computation_destroy. */
KILN_API kiln_status_t* kiln_builder_build(kiln_builder_t* builder, kiln_op_t root,
                                           kiln_computation_t** out_computation);

/* Ops. Shared rules:
 *  - A shape is (element type, dims, rank); `dims` may be NULL when rank is 0.
 *    Dims are >= 0 and the array's byte size must fit in 64 bits (else
 *    INVALID_ARGUMENT); shapes an op infers have at most 2^60 elements.
 *  - An integer list is (pointer, count); the pointer may be NULL when count is 0.
 *  - An op list is (const kiln_op_t*, count).
 *  - Nested computations (to_apply, condition, body, branches, comparator) are
 *    built computations; they are copied, so the caller may destroy them after
 *    the call.
 *  - Optional per-dimension arrays may be NULL: strides and dilations then
 *    default to 1, paddings to 0.
 *  - Dimension numbers may be negative where XLA allows (-1 = last).
 *  - Every op returns a new handle, or KILN_OP_INVALID and records the error. */

/* --- Leaves */

/* Parameter `number` (0 to 2^20) of the given shape. `minor_to_major` (rank entries) gives a
 * layout, NULL the default major-to-minor one. `name` may be NULL. */
KILN_API kiln_op_t kiln_op_parameter(kiln_builder_t* builder, int64_t number, kiln_element_type_t type,
                                     const int64_t* dims, size_t rank, const int64_t* minor_to_major,
                                     const char* name);
/* A constant array copied from `data` (`byte_size` bytes, row-major). */
KILN_API kiln_op_t kiln_op_constant(kiln_builder_t* builder, kiln_element_type_t type, const int64_t* dims,
                                    size_t rank, const void* data, size_t byte_size);
/* Scalar constants. */
KILN_API kiln_op_t kiln_op_constant_f32(kiln_builder_t* builder, float value);
KILN_API kiln_op_t kiln_op_constant_f64(kiln_builder_t* builder, double value);
KILN_API kiln_op_t kiln_op_constant_s32(kiln_builder_t* builder, int32_t value);
KILN_API kiln_op_t kiln_op_constant_s64(kiln_builder_t* builder, int64_t value);
KILN_API kiln_op_t kiln_op_constant_u32(kiln_builder_t* builder, uint32_t value);
KILN_API kiln_op_t kiln_op_constant_pred(kiln_builder_t* builder, int value);
/* An array of the given shape counting 0, 1, ... along `iota_dimension`. */
KILN_API kiln_op_t kiln_op_iota(kiln_builder_t* builder, kiln_element_type_t type, const int64_t* dims,
                                size_t rank, int64_t iota_dimension);

/* --- Elementwise binary ops. `broadcast_dimensions` maps the lower-rank operand's
 * dimensions into the higher-rank one's; none means equal shapes or a scalar. */
KILN_API kiln_op_t kiln_op_add(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_sub(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_mul(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_div(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
/* sign of the dividend */
KILN_API kiln_op_t kiln_op_rem(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_max(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_min(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_pow(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_atan2(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                 const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_and(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_or(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                              const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_xor(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                               const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_shift_left(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_shift_right_arithmetic(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                                  const int64_t* broadcast_dimensions,
                                                  size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_shift_right_logical(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                               const int64_t* broadcast_dimensions,
                                               size_t num_broadcast_dimensions);
/* (real, imag) -> complex */
KILN_API kiln_op_t kiln_op_complex(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                   const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
/* Comparisons, result PRED. */
KILN_API kiln_op_t kiln_op_eq(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                              const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_ne(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                              const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_ge(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                              const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_gt(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                              const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_le(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                              const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_lt(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                              const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);

/* Comparison with an explicit direction and type (KILN_COMPARE_*, KILN_COMPARISON_TYPE_*). */
KILN_API kiln_op_t kiln_op_compare(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                   kiln_comparison_direction_t direction, kiln_comparison_type_t type,
                                   const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);

/* --- Elementwise unary ops. */
KILN_API kiln_op_t kiln_op_abs(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_neg(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_not(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_sign(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_floor(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_ceil(kiln_builder_t* builder, kiln_op_t x);
/* half away from zero */
KILN_API kiln_op_t kiln_op_round(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_round_nearest_even(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_exp(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_expm1(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_log(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_log1p(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_logistic(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_sqrt(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_rsqrt(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_cbrt(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_sin(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_cos(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_tan(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_tanh(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_erf(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_is_finite(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_clz(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_popcnt(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_real(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_imag(kiln_builder_t* builder, kiln_op_t x);
KILN_API kiln_op_t kiln_op_copy(kiln_builder_t* builder, kiln_op_t x);
/* Sum across replicas (identity with one replica). */
KILN_API kiln_op_t kiln_op_cross_replica_sum(kiln_builder_t* builder, kiln_op_t x);
/* A barrier passes its (possibly tuple) operand through unchanged. */
KILN_API kiln_op_t kiln_op_optimization_barrier(kiln_builder_t* builder, kiln_op_t x);

/* --- Ternary ops. */
KILN_API kiln_op_t kiln_op_select(kiln_builder_t* builder, kiln_op_t pred, kiln_op_t on_true,
                                  kiln_op_t on_false);
KILN_API kiln_op_t kiln_op_clamp(kiln_builder_t* builder, kiln_op_t min, kiln_op_t operand, kiln_op_t max);

/* --- Type changes. */
KILN_API kiln_op_t kiln_op_convert(kiln_builder_t* builder, kiln_op_t operand, kiln_element_type_t new_type);
KILN_API kiln_op_t kiln_op_bitcast_convert(kiln_builder_t* builder, kiln_op_t operand,
                                           kiln_element_type_t new_type);
KILN_API kiln_op_t kiln_op_reduce_precision(kiln_builder_t* builder, kiln_op_t operand, int64_t exponent_bits,
                                            int64_t mantissa_bits);

/* --- Shape manipulation. */
/* Adds major dimensions of sizes `broadcast_sizes` (seed Broadcast). */
KILN_API kiln_op_t kiln_op_broadcast(kiln_builder_t* builder, kiln_op_t operand,
                                     const int64_t* broadcast_sizes, size_t num_broadcast_sizes);
/* Operand dimension i maps to output dimension broadcast_dimensions[i]. */
KILN_API kiln_op_t kiln_op_broadcast_in_dim(kiln_builder_t* builder, kiln_op_t operand,
                                            const int64_t* out_dims, size_t out_rank,
                                            const int64_t* broadcast_dimensions,
                                            size_t num_broadcast_dimensions);
KILN_API kiln_op_t kiln_op_reshape(kiln_builder_t* builder, kiln_op_t operand, const int64_t* new_sizes,
                                   size_t new_rank);
/* Transposes by `dimensions` (a permutation) first, then reshapes (seed form). */
KILN_API kiln_op_t kiln_op_reshape_with_dimensions(kiln_builder_t* builder, kiln_op_t operand,
                                                   const int64_t* dimensions, size_t num_dimensions,
                                                   const int64_t* new_sizes, size_t new_rank);
/* Merges the consecutive `dimensions` into one. */
KILN_API kiln_op_t kiln_op_collapse(kiln_builder_t* builder, kiln_op_t operand, const int64_t* dimensions,
                                    size_t num_dimensions);
KILN_API kiln_op_t kiln_op_transpose(kiln_builder_t* builder, kiln_op_t operand, const int64_t* permutation,
                                     size_t rank);
KILN_API kiln_op_t kiln_op_rev(kiln_builder_t* builder, kiln_op_t operand, const int64_t* dimensions,
                               size_t num_dimensions);
KILN_API kiln_op_t kiln_op_concat_in_dim(kiln_builder_t* builder, const kiln_op_t* operands,
                                         size_t num_operands, int64_t dimension);
/* Pads dimension i by edge_low[i], edge_high[i] (negative removes) and interior[i]
 * (>= 0) copies of `padding_value` (a scalar); the three arrays have `rank` entries. */
KILN_API kiln_op_t kiln_op_pad(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t padding_value,
                               const int64_t* edge_low, const int64_t* edge_high, const int64_t* interior,
                               size_t rank);
/* Static slice: the three arrays have `rank` entries. */
KILN_API kiln_op_t kiln_op_slice(kiln_builder_t* builder, kiln_op_t operand, const int64_t* start_indices,
                                 const int64_t* limit_indices, const int64_t* strides, size_t rank);
KILN_API kiln_op_t kiln_op_slice_in_dim(kiln_builder_t* builder, kiln_op_t operand, int64_t start_index,
                                        int64_t limit_index, int64_t stride, int64_t dimension);
/* Seed form: `start_indices` is a rank-1 integer array, one entry per dimension;
 * starts are clamped so the slice stays in bounds. */
KILN_API kiln_op_t kiln_op_dynamic_slice(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t start_indices,
                                         const int64_t* slice_sizes, size_t num_slice_sizes);
/* HLO form: one scalar start index op per dimension. */
KILN_API kiln_op_t kiln_op_dynamic_slice_scalars(kiln_builder_t* builder, kiln_op_t operand,
                                                 const kiln_op_t* start_indices, size_t num_start_indices,
                                                 const int64_t* slice_sizes, size_t num_slice_sizes);
KILN_API kiln_op_t kiln_op_dynamic_update_slice(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t update,
                                                kiln_op_t start_indices);
KILN_API kiln_op_t kiln_op_dynamic_update_slice_scalars(kiln_builder_t* builder, kiln_op_t operand,
                                                        kiln_op_t update, const kiln_op_t* start_indices,
                                                        size_t num_start_indices);
/* Size of dimension `dimension` as an S32 scalar. */
KILN_API kiln_op_t kiln_op_get_dimension_size(kiln_builder_t* builder, kiln_op_t operand, int64_t dimension);

/* Gather dimension numbers (XLA GatherDimensionNumbers). */
typedef struct kiln_gather_dimension_numbers_t {
  size_t struct_size;
  const int64_t* offset_dims;
  size_t num_offset_dims;
  const int64_t* collapsed_slice_dims;
  size_t num_collapsed_slice_dims;
  const int64_t* start_index_map;
  size_t num_start_index_map;
  int64_t index_vector_dim;
  const int64_t* operand_batching_dims;
  size_t num_operand_batching_dims;
  const int64_t* start_indices_batching_dims;
  size_t num_start_indices_batching_dims;
} kiln_gather_dimension_numbers_t;
#define KILN_GATHER_DIMENSION_NUMBERS_INIT \
  {sizeof(kiln_gather_dimension_numbers_t), NULL, 0, NULL, 0, NULL, 0, 0, NULL, 0, NULL, 0}

KILN_API kiln_op_t kiln_op_gather(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t start_indices,
                                  const kiln_gather_dimension_numbers_t* dimension_numbers,
                                  const int64_t* slice_sizes, size_t num_slice_sizes, int indices_are_sorted);

/* Scatter dimension numbers (XLA ScatterDimensionNumbers). */
typedef struct kiln_scatter_dimension_numbers_t {
  size_t struct_size;
  const int64_t* update_window_dims;
  size_t num_update_window_dims;
  const int64_t* inserted_window_dims;
  size_t num_inserted_window_dims;
  const int64_t* scatter_dims_to_operand_dims;
  size_t num_scatter_dims_to_operand_dims;
  int64_t index_vector_dim;
  const int64_t* input_batching_dims;
  size_t num_input_batching_dims;
  const int64_t* scatter_indices_batching_dims;
  size_t num_scatter_indices_batching_dims;
} kiln_scatter_dimension_numbers_t;
#define KILN_SCATTER_DIMENSION_NUMBERS_INIT \
  {sizeof(kiln_scatter_dimension_numbers_t), NULL, 0, NULL, 0, NULL, 0, 0, NULL, 0, NULL, 0}

/* Variadic scatter: `num_operands` operands and as many updates; `update_computation`
 * combines (old..., new...) scalars. Returns a tuple when num_operands > 1. */
KILN_API kiln_op_t kiln_op_scatter(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                   kiln_op_t scatter_indices, const kiln_op_t* updates, size_t num_updates,
                                   const kiln_computation_t* update_computation,
                                   const kiln_scatter_dimension_numbers_t* dimension_numbers,
                                   int indices_are_sorted, int unique_indices);

/* --- Tuples. */
KILN_API kiln_op_t kiln_op_tuple(kiln_builder_t* builder, const kiln_op_t* elements, size_t num_elements);
KILN_API kiln_op_t kiln_op_get_tuple_element(kiln_builder_t* builder, kiln_op_t tuple, int64_t index);

/* --- Contractions. */
/* Vector/matrix dot (seed Dot). */
KILN_API kiln_op_t kiln_op_dot(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs);

typedef struct kiln_dot_dimension_numbers_t {
  size_t struct_size;
  const int64_t* lhs_contracting_dimensions;
  size_t num_lhs_contracting_dimensions;
  const int64_t* rhs_contracting_dimensions;
  size_t num_rhs_contracting_dimensions;
  const int64_t* lhs_batch_dimensions;
  size_t num_lhs_batch_dimensions;
  const int64_t* rhs_batch_dimensions;
  size_t num_rhs_batch_dimensions;
} kiln_dot_dimension_numbers_t;
#define KILN_DOT_DIMENSION_NUMBERS_INIT \
  {sizeof(kiln_dot_dimension_numbers_t), NULL, 0, NULL, 0, NULL, 0, NULL, 0}

KILN_API kiln_op_t kiln_op_dot_general(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                       const kiln_dot_dimension_numbers_t* dimension_numbers);

/* XLA's precision config for the operands of a dot or convolution. DEFAULT
 * (what every dot and convolution starts with) lets a backend choose a faster
 * algorithm whose rounding error is a little larger than a plain sum's: the
 * CPU backend runs large 3x3 stride-1 f32 convolutions with Winograd's
 * algorithm. HIGH and HIGHEST keep the plain sum of products. */
typedef int32_t kiln_precision_t;
#define KILN_PRECISION_DEFAULT 0
#define KILN_PRECISION_HIGH 1
#define KILN_PRECISION_HIGHEST 2

/* Sets the precision of `op`'s two operands; `op` must be a dot or a
 * convolution of `builder`. Returns a handle to the same op (`op` stays valid
 * too), or KILN_OP_INVALID with the builder's error set (INVALID_ARGUMENT
 * naming the op) when `op` is neither or a precision is not one of the
 * KILN_PRECISION_* values. Not thread-safe, like every builder function. */
KILN_API kiln_op_t kiln_op_set_precision(kiln_builder_t* builder, kiln_op_t op,
                                         kiln_precision_t lhs_precision, kiln_precision_t rhs_precision);

/* Convolution dimension numbers; the three spatial lists have equal length. */
typedef struct kiln_conv_dimension_numbers_t {
  size_t struct_size;
  int64_t input_batch_dimension;
  int64_t input_feature_dimension;
  const int64_t* input_spatial_dimensions;
  int64_t kernel_input_feature_dimension;
  int64_t kernel_output_feature_dimension;
  const int64_t* kernel_spatial_dimensions;
  int64_t output_batch_dimension;
  int64_t output_feature_dimension;
  const int64_t* output_spatial_dimensions;
  size_t num_spatial_dimensions;
} kiln_conv_dimension_numbers_t;
/* NCHW input, OIHW kernel, NCHW output with no spatial dimensions: point the three
 * spatial arrays at {2, 3} (for 2-D) and set num_spatial_dimensions. */
#define KILN_CONV_DIMENSION_NUMBERS_INIT \
  {sizeof(kiln_conv_dimension_numbers_t), 0, 1, NULL, 1, 0, NULL, 0, 1, NULL, 0}

/* Seed Conv: NCHW input, OIHW kernel, no dilation. */
KILN_API kiln_op_t kiln_op_conv(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                const int64_t* window_strides, size_t num_spatial, kiln_padding_t padding);
/* Explicit (low, high) padding per spatial dimension. */
KILN_API kiln_op_t kiln_op_conv_with_general_padding(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                                     const int64_t* window_strides,
                                                     const int64_t* padding_low, const int64_t* padding_high,
                                                     size_t num_spatial);
KILN_API kiln_op_t kiln_op_conv_with_general_dimensions(
    kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs, const int64_t* window_strides, size_t num_spatial,
    kiln_padding_t padding, const kiln_conv_dimension_numbers_t* dimension_numbers);
KILN_API kiln_op_t kiln_op_conv_general(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                        const int64_t* window_strides, const int64_t* padding_low,
                                        const int64_t* padding_high, size_t num_spatial,
                                        const kiln_conv_dimension_numbers_t* dimension_numbers);
/* The full form: `lhs_dilation` and `rhs_dilation` may be NULL (all 1). */
KILN_API kiln_op_t kiln_op_conv_general_dilated(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                                const int64_t* window_strides, const int64_t* padding_low,
                                                const int64_t* padding_high, const int64_t* lhs_dilation,
                                                const int64_t* rhs_dilation, size_t num_spatial,
                                                const kiln_conv_dimension_numbers_t* dimension_numbers,
                                                int64_t feature_group_count, int64_t batch_group_count);

/* --- Fourier transforms. */
/* XLA's Fft: the discrete Fourier transform over the operand's `num_fft_length`
 * (1 to 3) trailing dimensions, whose sizes `fft_length` gives:
 *  - KILN_FFT_FFT, KILN_FFT_IFFT: c64/c128 -> the same shape; the inverse is
 *    scaled by 1/N (N: the product of fft_length), as NumPy's ifftn.
 *  - KILN_FFT_RFFT: f32/f64 -> c64/c128, the last dimension becoming
 *    fft_length[last]/2+1 (the non-negative frequencies, as NumPy's rfftn).
 *  - KILN_FFT_IRFFT: c64/c128 whose last dimension is fft_length[last]/2+1 ->
 *    f32/f64 with the trailing dimensions fft_length, scaled by 1/N (NumPy's
 *    irfftn; the imaginary parts that a real signal's spectrum cannot have
 *    are ignored).
 * Other element types, an fft_length of 0 or more than 3 entries, a negative
 * length, or trailing dimensions that do not match are INVALID_ARGUMENT
 * naming the op and what differs. The interpreter (through Eigen's FFT
 * module) and cpu (Kiln's own FFT) run it; on vulkan and cuda, kiln_client_compile refuses it by
 * name (UNIMPLEMENTED). (Since 0.2.) */
KILN_API kiln_op_t kiln_op_fft(kiln_builder_t* builder, kiln_op_t operand, kiln_fft_type_t fft_type,
                               const int64_t* fft_length, size_t num_fft_length);

/* --- Reductions, windows, maps and sorts. */
KILN_API kiln_op_t kiln_op_reduce(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t init_value,
                                  const kiln_computation_t* computation, const int64_t* dimensions,
                                  size_t num_dimensions);
/* Variadic reduce: N operands, N init values, a computation of 2N scalars -> N-tuple. */
KILN_API kiln_op_t kiln_op_reduce_variadic(kiln_builder_t* builder, const kiln_op_t* operands,
                                           const kiln_op_t* init_values, size_t num_operands,
                                           const kiln_computation_t* computation, const int64_t* dimensions,
                                           size_t num_dimensions);
/* Seed ReduceWindow; the two arrays have `rank` entries. */
KILN_API kiln_op_t kiln_op_reduce_window(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t init_value,
                                         const kiln_computation_t* computation,
                                         const int64_t* window_dimensions, const int64_t* window_strides,
                                         size_t rank, kiln_padding_t padding);
/* General ReduceWindow: N operands/init values; the per-dimension arrays have `rank`
 * entries; `base_dilations`, `window_dilations`, `padding_low`, `padding_high` may
 * be NULL (1, 1, 0, 0). */
KILN_API kiln_op_t kiln_op_reduce_window_general(kiln_builder_t* builder, const kiln_op_t* operands,
                                                 const kiln_op_t* init_values, size_t num_operands,
                                                 const kiln_computation_t* computation,
                                                 const int64_t* window_dimensions,
                                                 const int64_t* window_strides, const int64_t* base_dilations,
                                                 const int64_t* window_dilations, const int64_t* padding_low,
                                                 const int64_t* padding_high, size_t rank);
KILN_API kiln_op_t kiln_op_select_and_scatter(kiln_builder_t* builder, kiln_op_t operand,
                                              const kiln_computation_t* select,
                                              const int64_t* window_dimensions, const int64_t* window_strides,
                                              size_t rank, kiln_padding_t padding, kiln_op_t source,
                                              kiln_op_t init_value, const kiln_computation_t* scatter);
KILN_API kiln_op_t kiln_op_select_and_scatter_general(kiln_builder_t* builder, kiln_op_t operand,
                                                      const kiln_computation_t* select,
                                                      const int64_t* window_dimensions,
                                                      const int64_t* window_strides,
                                                      const int64_t* padding_low, const int64_t* padding_high,
                                                      size_t rank, kiln_op_t source, kiln_op_t init_value,
                                                      const kiln_computation_t* scatter);
KILN_API kiln_op_t kiln_op_map(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                               const kiln_computation_t* computation, const int64_t* dimensions,
                               size_t num_dimensions);
/* Seed Sort: ascending along the last dimension. */
KILN_API kiln_op_t kiln_op_sort(kiln_builder_t* builder, kiln_op_t operand);
/* Sorts N operands by `comparator` (2N scalars -> PRED) along `dimension`. */
KILN_API kiln_op_t kiln_op_sort_variadic(kiln_builder_t* builder, const kiln_op_t* operands,
                                         size_t num_operands, const kiln_computation_t* comparator,
                                         int64_t dimension, int is_stable);
KILN_API kiln_op_t kiln_op_all_reduce(kiln_builder_t* builder, kiln_op_t operand,
                                      const kiln_computation_t* computation);

/* --- Batch normalisation. */
KILN_API kiln_op_t kiln_op_batch_norm_training(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t scale,
                                               kiln_op_t offset, float epsilon, int64_t feature_index);
KILN_API kiln_op_t kiln_op_batch_norm_inference(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t scale,
                                                kiln_op_t offset, kiln_op_t mean, kiln_op_t variance,
                                                float epsilon, int64_t feature_index);
KILN_API kiln_op_t kiln_op_batch_norm_grad(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t scale,
                                           kiln_op_t mean, kiln_op_t variance, kiln_op_t grad_output,
                                           float epsilon, int64_t feature_index);

/* --- Control flow. */
KILN_API kiln_op_t kiln_op_call(kiln_builder_t* builder, const kiln_computation_t* computation,
                                const kiln_op_t* operands, size_t num_operands);
KILN_API kiln_op_t kiln_op_while(kiln_builder_t* builder, const kiln_computation_t* condition,
                                 const kiln_computation_t* body, kiln_op_t init);
/* Predicate form. */
KILN_API kiln_op_t kiln_op_conditional(kiln_builder_t* builder, kiln_op_t predicate, kiln_op_t true_operand,
                                       const kiln_computation_t* true_computation, kiln_op_t false_operand,
                                       const kiln_computation_t* false_computation);
/* Branch-index form: an S32 index out of range runs the last branch. */
KILN_API kiln_op_t kiln_op_conditional_indexed(kiln_builder_t* builder, kiln_op_t branch_index,
                                               const kiln_computation_t* const* branch_computations,
                                               const kiln_op_t* branch_operands, size_t num_branches);

/* --- Random numbers (deterministic for a given execute seed). */
KILN_API kiln_op_t kiln_op_rng_uniform(kiln_builder_t* builder, kiln_op_t a, kiln_op_t b,
                                       kiln_element_type_t type, const int64_t* dims, size_t rank);
KILN_API kiln_op_t kiln_op_rng_normal(kiln_builder_t* builder, kiln_op_t mu, kiln_op_t sigma,
                                      kiln_element_type_t type, const int64_t* dims, size_t rank);
KILN_API kiln_op_t kiln_op_rng_bernoulli(kiln_builder_t* builder, kiln_op_t p, kiln_element_type_t type,
                                         const int64_t* dims, size_t rank);
/* Returns the tuple (new_state, bits) with bits of the given shape. */
KILN_API kiln_op_t kiln_op_rng_bit_generator(kiln_builder_t* builder, kiln_rng_algorithm_t algorithm,
                                             kiln_op_t initial_state, kiln_element_type_t type,
                                             const int64_t* dims, size_t rank);

/* --- Host communication, tokens and extension. `config` and `opaque` may be NULL. */
/* Reads the next array queued by kiln_client_transfer_to_infeed. */
KILN_API kiln_op_t kiln_op_infeed(kiln_builder_t* builder, kiln_element_type_t type, const int64_t* dims,
                                  size_t rank, const char* config);
KILN_API kiln_op_t kiln_op_outfeed(kiln_builder_t* builder, kiln_op_t operand, const char* config);
/* Calls the registered target `target` (see kiln_register_custom_call). */
KILN_API kiln_op_t kiln_op_custom_call(kiln_builder_t* builder, const char* target, const kiln_op_t* operands,
                                       size_t num_operands, kiln_element_type_t type, const int64_t* dims,
                                       size_t rank, const char* opaque, int has_side_effect);
KILN_API kiln_op_t kiln_op_after_all(kiln_builder_t* builder, const kiln_op_t* tokens, size_t num_tokens);
KILN_API kiln_op_t kiln_op_create_token(kiln_builder_t* builder);

/* ------------------------------------------------------------------------- */
/* Computations                                                              */
/* ------------------------------------------------------------------------- */

/* Parses and verifies XLA HLO text (`text_size` bytes, need not be NUL-terminated).
 * Errors are INVALID_ARGUMENT naming line and column. The caller owns
 * *out_computation; free it with kiln_computation_destroy. */
KILN_API kiln_status_t* kiln_computation_from_hlo_text(const char* text, size_t text_size,
                                                       kiln_computation_t** out_computation);

/* Prints the computation as HLO text (NUL-terminated). The caller owns *out_text and
 * frees it with kiln_string_destroy. */
KILN_API kiln_status_t* kiln_computation_to_hlo_text(const kiln_computation_t* computation, char** out_text);

/* Number of parameters of the entry computation. */
KILN_API kiln_status_t* kiln_computation_parameter_count(const kiln_computation_t* computation,
                                                         size_t* out_count);

/* Reverse-mode automatic differentiation (vector-Jacobian products): a new
 * computation that computes `computation` and its gradient, compiled and run
 * like any other. (Since 0.2.)
 *
 * The new computation takes the parameters of `computation`, then, unless its
 * result is one floating-point scalar (not in a tuple), one cotangent per
 * array leaf of the result (tuples flattened in order), each of that leaf's
 * shape. It returns a tuple: the result leaves of `computation`, then for
 * each of the `num_wrt` parameter numbers in `wrt`, in that order, the
 * cotangents pulled back to that parameter (of its shape). For a scalar
 * result the cotangent is 1, so these are the gradients of a loss.
 *
 * Covered: elementwise float and complex math, convert, the shape ops,
 * gather, scatters, reduce and reduce-window with any elementwise reducer
 * (products included), dot,
 * convolution, sort, top-k, fft, batch-norm, map, calls (inlined),
 * user-defined ops with a gradient function (kiln_user_op_def_set_grad_fn),
 * conditionals and while loops with run-time trip counts (the README's
 * "Gradients" lists the rules, says how loops are differentiated and what a
 * loop's gradient costs in memory). Errors, each naming what is wrong:
 * INVALID_ARGUMENT for an empty `wrt`, a number that is not a parameter, a
 * number given twice, a parameter that is not an f16/bf16/f32/f64/c64/c128
 * array, an op on the way from a differentiated parameter to the result
 * that has no derivative (naming the op and its instruction), a scatter
 * whose combiner depends on the order in which repeated indices are
 * applied (naming it and the combiner); UNIMPLEMENTED for such an op
 * whose rule is not written yet (the README lists them), and for tuple
 * parameters. `computation` is not changed. The
 * caller owns *out_computation; free it with kiln_computation_destroy. */
KILN_API kiln_status_t* kiln_computation_vjp(const kiln_computation_t* computation, const int64_t* wrt,
                                             size_t num_wrt, kiln_computation_t** out_computation);

/* The value and gradient of a scalar loss: as kiln_computation_vjp, for a
 * `computation` whose result is one f16/bf16/f32/f64 scalar (else
 * INVALID_ARGUMENT naming its shape). The new computation takes the same
 * parameters and returns the tuple (loss, d loss / d wrt[0], ...,
 * d loss / d wrt[num_wrt - 1]), each gradient of its parameter's shape.
 * (Since 0.2.) The caller owns *out_computation; free it with
 * kiln_computation_destroy. */
KILN_API kiln_status_t* kiln_computation_value_and_grad(const kiln_computation_t* computation,
                                                        const int64_t* wrt, size_t num_wrt,
                                                        kiln_computation_t** out_computation);

/* Forward-mode automatic differentiation (Jacobian-vector products): a new
 * computation that computes `computation` and, alongside, the derivative
 * of its results in a direction, compiled and run like any other.
 * (Since 0.2.)
 *
 * The new computation takes the parameters of `computation`, then one
 * tangent per parameter number in `wrt` (in that order), each of that
 * parameter's shape. It returns a tuple: the result leaves of `computation`
 * (tuples flattened in order), then the tangent of each result leaf, of
 * that leaf's shape: J v, the Jacobian of the results with respect to the
 * `wrt` parameters times the tangents. Integer and predicate results get
 * zeros (they have no derivative). No tape is kept: a while loop carries
 * its state's tangents in its state, so the memory does not grow with the
 * trip count.
 *
 * Covered: elementwise float math, convert, the shape ops, gather, the
 * scatters reverse mode covers, reduce and reduce-window with any
 * elementwise reducer (products included), dot,
 * convolution, sort, top-k, calls (inlined), conditionals, while loops with
 * run-time trip counts, batch-norm ops, map, complex intermediates and fft,
 * and user-defined ops with a gradient function (the tangent is derived by
 * transposing it; UNIMPLEMENTED naming the op when that gradient cannot be
 * differentiated). A c64/c128 parameter's tangent is complex; J v is the
 * derivative along it (for any real and imaginary parts), and
 * kiln_computation_vjp is its transpose under <a, b> = Re(sum a b). Errors,
 * each naming what is wrong: INVALID_ARGUMENT for an empty `wrt`, a
 * number that is not a parameter, a number given twice, a parameter that
 * is not an f16/bf16/f32/f64/c64/c128 array, an op on the way from a
 * differentiated parameter to the result that has no derivative (naming
 * the op and its instruction); UNIMPLEMENTED for such an op whose rule is
 * not written yet, and for tuple parameters. `computation` is
 * not changed. Thread-safe for distinct output pointers (it only reads
 * `computation`). The caller owns *out_computation; free it with
 * kiln_computation_destroy. */
KILN_API kiln_status_t* kiln_computation_jvp(const kiln_computation_t* computation, const int64_t* wrt,
                                             size_t num_wrt, kiln_computation_t** out_computation);

/* Frees a computation. NULL is a no-op. */
KILN_API void kiln_computation_destroy(kiln_computation_t* computation);

/* ------------------------------------------------------------------------- */
/* Buffers                                                                   */
/* ------------------------------------------------------------------------- */

/* An array in a device's memory. Immutable; reads are thread-safe. */
typedef struct kiln_buffer_t kiln_buffer_t;

/* Copies a host array into a new buffer on the client's first device. `data` holds
 * exactly `byte_size` bytes in row-major order (byte width x element count, else
 * INVALID_ARGUMENT); it is copied before the call returns. `minor_to_major` (rank
 * entries) sets the device layout, NULL the default. The caller owns *out_buffer
 * and frees it with kiln_buffer_destroy (before or after `client`). */
KILN_API kiln_status_t* kiln_client_buffer_from_host(kiln_client_t* client, kiln_element_type_t type,
                                                     const int64_t* dims, size_t rank,
                                                     const int64_t* minor_to_major, const void* data,
                                                     size_t byte_size, kiln_buffer_t** out_buffer);

/* As kiln_client_buffer_from_host, on `device` (any device of any client).
 * (Since 0.2.) */
KILN_API kiln_status_t* kiln_device_buffer_from_host(kiln_device_t* device, kiln_element_type_t type,
                                                     const int64_t* dims, size_t rank,
                                                     const int64_t* minor_to_major, const void* data,
                                                     size_t byte_size, kiln_buffer_t** out_buffer);

/* Called once when the library no longer reads the memory given to
 * kiln_device_buffer_alias_host (or the device memory given to
 * kiln_device_buffer_alias_cuda_memory), with that call's `user_data`. It may run on any
 * thread (the one destroying the buffer's last user, or the creating thread) and
 * must not call back into the library with the buffer it releases. */
typedef void (*kiln_host_release_fn)(void* user_data);

/* A buffer over host memory the caller owns, without copying where the device
 * reads host memory directly: the "cpu" backend does for `data` aligned to its
 * element type (as C and NumPy lay arrays out; a complex type to its parts'
 * width) other than KILN_TYPE_PRED (kiln_buffer_is_host_alias then reports
 * 1). Elsewhere (other backends, misaligned data, PRED) the bytes are copied
 * before the call returns.
 * `data` holds `byte_size` bytes of the array in row-major order, as for
 * kiln_client_buffer_from_host. The caller must keep it allocated and unchanged
 * until `release` (may be NULL) is called: once, after the buffer and every
 * execution reading it are gone, or before the call returns when the data was
 * copied (also when the call fails). The caller owns *out_buffer. Thread-safe.
 * (Since 0.2.) */
KILN_API kiln_status_t* kiln_device_buffer_alias_host(kiln_device_t* device, kiln_element_type_t type,
                                                      const int64_t* dims, size_t rank, const void* data,
                                                      size_t byte_size, kiln_host_release_fn release,
                                                      void* user_data, kiln_buffer_t** out_buffer);

/* Writes 1 to *out_is_alias when the buffer reads host memory given to
 * kiln_device_buffer_alias_host in place, else 0. (Since 0.2.) */
KILN_API kiln_status_t* kiln_buffer_is_host_alias(const kiln_buffer_t* buffer, int* out_is_alias);

/* A buffer over CUDA device memory the caller owns (another library's
 * allocation on the same GPU), read in place: no copy. `device` is a device
 * of a "cuda" client; `device_address` (a CUdeviceptr of that GPU, in the
 * primary context Kiln uses) holds the array's bytes in row-major order,
 * aligned to the element type (a complex type to its parts' width); it may
 * be 0 only for an array without elements. Work queued on that memory must
 * be complete, or queued on the legacy default stream, which this call
 * synchronises. The caller keeps the memory allocated and unchanged until
 * `release` (may be NULL) is called: once, after the buffer and every
 * execution reading it are gone, or before the call returns when it fails.
 * INVALID_ARGUMENT, naming the call: a device of another backend (its
 * memory is not CUDA memory), a misaligned or 0 address, a bad shape. The
 * caller owns *out_buffer. Thread-safe. (Since 0.2.) */
KILN_API kiln_status_t* kiln_device_buffer_alias_cuda_memory(kiln_device_t* device, kiln_element_type_t type,
                                                             const int64_t* dims, size_t rank,
                                                             uint64_t device_address,
                                                             kiln_host_release_fn release, void* user_data,
                                                             kiln_buffer_t** out_buffer);

/* Where a buffer of a "cuda" client lies in GPU memory, once it is ready
 * (an execution's error is returned if it failed): the GPU's CUDA device
 * ordinal to *out_ordinal and the CUdeviceptr of its row-major bytes to
 * *out_device_address (0 for an array without elements). The memory stays
 * valid while the buffer handle lives; never write through it (Kiln buffers
 * are immutable). INVALID_ARGUMENT for a buffer of another backend, naming
 * it. (Since 0.2.) */
KILN_API kiln_status_t* kiln_buffer_cuda_memory(const kiln_buffer_t* buffer, int* out_ordinal,
                                                uint64_t* out_device_address);

/* Frees a buffer handle. NULL is a no-op. An execution still running on it
 * (kiln_executable_execute_async) keeps its memory until it ends. */
KILN_API void kiln_buffer_destroy(kiln_buffer_t* buffer);

/* The device the buffer lives on. (Since 0.2.) */
KILN_API kiln_status_t* kiln_buffer_device(const kiln_buffer_t* buffer, kiln_device_t** out_device);

/* Copies the buffer (once it is ready) to a new buffer on `device`, which must
 * belong to the same client (else INVALID_ARGUMENT). The caller owns
 * *out_buffer. (Since 0.2.) */
KILN_API kiln_status_t* kiln_buffer_copy_to_device(kiln_buffer_t* buffer, kiln_device_t* device,
                                                   kiln_buffer_t** out_buffer);

KILN_API kiln_status_t* kiln_buffer_element_type(const kiln_buffer_t* buffer, kiln_element_type_t* out_type);
KILN_API kiln_status_t* kiln_buffer_rank(const kiln_buffer_t* buffer, size_t* out_rank);
/* Shape queries (element type, rank, dimensions, layout, byte size) answer at
 * once, also for a buffer an asynchronous execution has not filled yet. */
/* Writes the dimensions to dims[0..rank); a capacity below the rank is INVALID_ARGUMENT. */
KILN_API kiln_status_t* kiln_buffer_dimensions(const kiln_buffer_t* buffer, int64_t* dims,
                                               size_t dims_capacity);
/* Writes the layout's minor_to_major to out[0..rank); capacity as above. */
KILN_API kiln_status_t* kiln_buffer_minor_to_major(const kiln_buffer_t* buffer, int64_t* minor_to_major,
                                                   size_t capacity);
/* Bytes of the row-major host copy (what kiln_buffer_to_host needs). */
KILN_API kiln_status_t* kiln_buffer_byte_size(const kiln_buffer_t* buffer, size_t* out_byte_size);
/* Copies the buffer to `dst` in row-major order; `dst_byte_size` must equal
 * kiln_buffer_byte_size (else INVALID_ARGUMENT, and `dst` is untouched). Waits
 * until the buffer is ready; when the execution that was to fill it failed,
 * returns that execution's error. */
KILN_API kiln_status_t* kiln_buffer_to_host(const kiln_buffer_t* buffer, void* dst, size_t dst_byte_size);

/* Reads a NumPy .npy file (bool and every numeric dtype, any byte order, C or
 * Fortran order) into a new buffer on the client's first device. NumPy has no
 * bf16 dtype: a two-byte void array ('V2', as ml_dtypes saves bf16) is read as
 * bf16 when `expected_type` is KILN_TYPE_BF16; otherwise pass KILN_TYPE_INVALID.
 * Errors: NOT_FOUND (cannot open), INVALID_ARGUMENT (malformed or unsupported
 * header, naming the file; an `expected_type` outside the enum), DATA_LOSS
 * (truncated). Limits: nothing beyond what the header declares is read, so
 * /dev/zero or a pipe that never ends is refused like any malformed file; a
 * header longer than 1 MiB is INVALID_ARGUMENT, array data larger than half
 * the machine's physical memory is RESOURCE_EXHAUSTED, and a regular file
 * whose size disagrees with its header is refused, all before any data is
 * read. The caller owns *out_buffer. */
KILN_API kiln_status_t* kiln_client_buffer_from_npy_file(kiln_client_t* client, const char* path,
                                                         kiln_element_type_t expected_type,
                                                         kiln_buffer_t** out_buffer);

/* Writes the buffer to `path` as a .npy file (C order, little-endian; bf16 as
 * '<V2'). Errors: INVALID_ARGUMENT for a null argument, NOT_FOUND when the file
 * cannot be created, DATA_LOSS when writing fails; messages name the file. */
KILN_API kiln_status_t* kiln_buffer_to_npy_file(const kiln_buffer_t* buffer, const char* path);

/* ------------------------------------------------------------------------- */
/* Safetensors files                                                         */
/* ------------------------------------------------------------------------- */

/* A safetensors file (Hugging Face's format for weights) opened for reading:
 * its header is read and checked once, then tensors are read by name. Not
 * thread-safe: use one from one thread at a time. (Since 0.2.) */
typedef struct kiln_safetensors_t kiln_safetensors_t;

/* Opens `path` and checks its header: NOT_FOUND when it cannot be opened;
 * INVALID_ARGUMENT for a malformed header (not a JSON object, a header over
 * 100 MiB, an unknown dtype, data_offsets that do not match the shape, that
 * overlap, leave holes or miss the end of the file, a name given twice),
 * DATA_LOSS for a truncated file; each message names the file and the tensor.
 * The caller owns *out_file and frees it with kiln_safetensors_destroy. */
KILN_API kiln_status_t* kiln_safetensors_open(const char* path, kiln_safetensors_t** out_file);

/* Frees a file. NULL is a no-op. */
KILN_API void kiln_safetensors_destroy(kiln_safetensors_t* file);

/* Number of tensors in the file. */
KILN_API kiln_status_t* kiln_safetensors_tensor_count(const kiln_safetensors_t* file, size_t* out_count);

/* Name of tensor `index` (in the order of their data in the file;
 * OUT_OF_RANGE past the end). The string lives as long as `file`. */
KILN_API kiln_status_t* kiln_safetensors_tensor_name(const kiln_safetensors_t* file, size_t index,
                                                     const char** out_name);

/* The value of metadata entry `key` ("__metadata__" in the header), NOT_FOUND
 * when the file has none by that name. The string lives as long as `file`. */
KILN_API kiln_status_t* kiln_safetensors_metadata(const kiln_safetensors_t* file, const char* key,
                                                  const char** out_value);

/* Reads tensor `name` into a new buffer on `device`. NOT_FOUND (listing the
 * file's tensors) for an unknown name; RESOURCE_EXHAUSTED for a tensor over
 * the file-array limit (half the machine's memory); DATA_LOSS when the file
 * changed under it. The caller owns *out_buffer. */
KILN_API kiln_status_t* kiln_safetensors_read(kiln_safetensors_t* file, kiln_device_t* device,
                                              const char* name, kiln_buffer_t** out_buffer);

/* Writes buffers (waiting until they are ready) to `path` as a safetensors
 * file: tensor i is `buffers[i]` under `names[i]` (unique, not
 * "__metadata__"), in that order, and `num_metadata` string pairs
 * (metadata_keys[i], metadata_values[i], keys unique) go to its
 * "__metadata__". INVALID_ARGUMENT for element types without a safetensors
 * dtype (C128), a name or key given twice, or a string that is not UTF-8;
 * NOT_FOUND when the file cannot be created. (Since 0.2.) */
KILN_API kiln_status_t* kiln_safetensors_write_file(const char* path, const char* const* names,
                                                    kiln_buffer_t* const* buffers, size_t num_buffers,
                                                    const char* const* metadata_keys,
                                                    const char* const* metadata_values, size_t num_metadata);

/* ------------------------------------------------------------------------- */
/* DLPack                                                                    */
/* ------------------------------------------------------------------------- */

/* DLPack's tensor structs (dlpack.h; DLPack 1.0 or later for the versioned
 * one). kiln.h only names them: include <dlpack/dlpack.h> to use them.
 * (Since 0.2.) */
struct DLManagedTensorVersioned;
struct DLManagedTensor;

/* Exports `buffer` as a DLPack 1.x tensor, once it is ready (an execution's
 * error is returned if it failed). On the host backends ("cpu",
 * "interpreter") the tensor points at the buffer's own memory, without a
 * copy (device kDLCPU 0); on "cuda" at the buffer's own GPU memory, without
 * a copy (device kDLCUDA, device_id = the GPU's CUDA ordinal; the data is
 * complete on the GPU, so a consumer may read it on any stream); on
 * "vulkan" at a host copy (kDLCPU 0), flagged DLPACK_FLAG_BITMASK_IS_COPIED:
 * Vulkan memory belongs to the VkDevice that allocated it, and no other
 * library here can open it, so Kiln never exports (or imports) kDLVulkan.
 * DLPACK_FLAG_BITMASK_READ_ONLY is always set: Kiln buffers are immutable, so
 * never write through it. Strides are always set (row-major,
 * in elements); PRED is kDLBool, BF16 kDLBfloat, C64/C128 kDLComplex. The
 * tensor keeps the memory alive until its deleter is called, whatever
 * happens to the buffer handle or its client meanwhile. The caller owns
 * *out_tensor and calls its deleter exactly once. Thread-safe. */
KILN_API kiln_status_t* kiln_buffer_to_dlpack_versioned(kiln_buffer_t* buffer,
                                                        struct DLManagedTensorVersioned** out_tensor);

/* As kiln_buffer_to_dlpack_versioned, as a pre-1.0 DLManagedTensor, which has
 * no flags: the consumer cannot learn that it must not write, or that the
 * data was copied. For consumers that know only the legacy struct. */
KILN_API kiln_status_t* kiln_buffer_to_dlpack(kiln_buffer_t* buffer, struct DLManagedTensor** out_tensor);

/* Imports a DLPack 1.x tensor as a buffer on `device`, taking it over: the
 * library calls its deleter (if not NULL) exactly once, on success and on
 * failure alike (when the buffer and every execution reading it are gone, or
 * before returning when the data was copied or refused). The tensor must be
 * compact and row-major (strides NULL or row-major in elements; size-1
 * dimensions may carry any stride). Host memory (kDLCPU, kDLCUDAHost) is read
 * in place where kiln_device_buffer_alias_host would read it in place, else
 * copied. CUDA memory (kDLCUDA) is read in place, as
 * kiln_device_buffer_alias_cuda_memory reads it, on `device` of a "cuda"
 * client whose CUDA ordinal is the tensor's device_id; its producer must
 * have finished writing it, or queued the writes on the legacy default
 * stream (DLPack's stream 1), which this call synchronises. The tensor must
 * not change while the buffer lives. INVALID_ARGUMENT, naming the call and
 * the field: `tensor` NULL (nothing to delete then), a major version other
 * than 1, a kDLCUDA tensor given to another backend's device or to another
 * GPU's device or of a GPU the client does not have, kDLVulkan (see
 * kiln_buffer_to_dlpack_versioned) or another device type, a dtype Kiln
 * lacks or lanes != 1, strides that are not row-major (make the array
 * contiguous first), a device address not aligned to the element type,
 * ndim above 64.
 * The caller owns *out_buffer. Thread-safe. */
KILN_API kiln_status_t* kiln_device_buffer_from_dlpack_versioned(kiln_device_t* device,
                                                                 struct DLManagedTensorVersioned* tensor,
                                                                 kiln_buffer_t** out_buffer);

/* As kiln_device_buffer_from_dlpack_versioned, for a pre-1.0 DLManagedTensor. */
KILN_API kiln_status_t* kiln_device_buffer_from_dlpack(kiln_device_t* device, struct DLManagedTensor* tensor,
                                                       kiln_buffer_t** out_buffer);

/* ------------------------------------------------------------------------- */
/* Events                                                                    */
/* ------------------------------------------------------------------------- */

/* The completion of work that runs in the background: an asynchronous
 * execution (kiln_executable_execute_async) or the filling of a buffer
 * (kiln_buffer_ready_event). One-shot: it becomes ready once, with success or
 * the error of the work. Each handle is the caller's, freed with
 * kiln_event_destroy, and may be used from several threads; destroying it
 * cancels nothing (the work, and callbacks already registered, go on), and it
 * may outlive the executable, buffers and client of its work. (Since 0.2.) */
typedef struct kiln_event_t kiln_event_t;

/* An event that becomes ready when `buffer` holds its data (at once for a
 * buffer made from host memory). The caller owns *out_event. A buffer whose
 * execution failed gives an event with that execution's error. */
KILN_API kiln_status_t* kiln_buffer_ready_event(const kiln_buffer_t* buffer, kiln_event_t** out_event);

/* Blocks until the event is ready, then returns the work's outcome: NULL when
 * it succeeded, else a new status (the caller's, as always) with its error. May
 * be called any number of times, from any thread. */
KILN_API kiln_status_t* kiln_event_await(const kiln_event_t* event);

/* Writes 1 to *out_ready when the event is ready, else 0. Never blocks. */
KILN_API kiln_status_t* kiln_event_is_ready(const kiln_event_t* event, int* out_ready);

/* Called once when an event is ready: `status` is NULL on success, else the
 * work's error, owned by the library and valid only during the call (copy
 * what you need; do not destroy it). */
typedef void (*kiln_event_callback_fn)(const kiln_status_t* status, void* user_data);

/* Registers `callback` to run once with `user_data` when the event is ready:
 * at once on the calling thread when it already is, otherwise on the thread
 * that finishes the work. The callback must be quick and must not block on
 * another event (it runs on the library's worker thread). */
KILN_API kiln_status_t* kiln_event_on_ready(const kiln_event_t* event, kiln_event_callback_fn callback,
                                            void* user_data);

/* Frees an event handle. NULL is a no-op. */
KILN_API void kiln_event_destroy(kiln_event_t* event);

/* ------------------------------------------------------------------------- */
/* Compilation and execution                                                 */
/* ------------------------------------------------------------------------- */

/* A compiled computation bound to a client. Thread-safe: may run concurrently. */
typedef struct kiln_executable_t kiln_executable_t;

typedef struct kiln_compile_options_t {
  size_t struct_size;
  /* 0 = only what correctness needs; 2 is the default; at most 3 (more is
   * INVALID_ARGUMENT). */
  int32_t optimization_level;
  /* Threads for intra-op parallelism; 0 = one per core. At most 4 per hardware
   * thread (std::thread::hardware_concurrency) and never fewer than 16 may be
   * asked for: more is INVALID_ARGUMENT, and the message gives the limit. */
  int32_t num_threads;
  /* 1 accepts the risk of wrong results with NaN or infinities: a program whose
   * results depend on them (maximum, minimum, clamp, a float compare,
   * is-finite, top-k) is compiled even for a device whose driver may assume no
   * NaN ever occurs (vulkan without shaderSignedZeroInfNanPreserveFloat32/64),
   * which otherwise refuses it as UNIMPLEMENTED. 0 (the default, and what a
   * caller whose struct_size ends before this field gets) refuses. Backends
   * that always keep NaN ignore it. The environment variable
   * KILN_VULKAN_ALLOW_NAN_UNSAFE=1 sets it for every compile. */
  int32_t allow_unsafe_nan_math;
} kiln_compile_options_t;
#define KILN_COMPILE_OPTIONS_INIT {sizeof(kiln_compile_options_t), 2, 0, 0}

/* Compiles `computation` for the client's backend. `options` may be NULL. An op
 * the backend cannot run is UNIMPLEMENTED naming it. The caller owns
 * *out_executable and frees it with kiln_executable_destroy (before or after
 * `client`); `computation` may be destroyed at once. Thread-safe. */
KILN_API kiln_status_t* kiln_client_compile(kiln_client_t* client, const kiln_computation_t* computation,
                                            const kiln_compile_options_t* options,
                                            kiln_executable_t** out_executable);

/* Frees an executable. NULL is a no-op. */
KILN_API void kiln_executable_destroy(kiln_executable_t* executable);

/* Number of arguments execute takes: the array leaves of the entry's parameters. */
KILN_API kiln_status_t* kiln_executable_parameter_count(const kiln_executable_t* executable,
                                                        size_t* out_count);
/* Number of results execute returns: the array leaves of the entry's result. */
KILN_API kiln_status_t* kiln_executable_result_count(const kiln_executable_t* executable, size_t* out_count);

/* Element type of argument `index` (< kiln_executable_parameter_count), e.g. to
 * read .npy inputs with kiln_client_buffer_from_npy_file. OUT_OF_RANGE otherwise. */
KILN_API kiln_status_t* kiln_executable_parameter_type(const kiln_executable_t* executable, size_t index,
                                                       kiln_element_type_t* out_type);

/* ------------------------------------------------------------------------- */
/* Cancellation and deadlines of an execution                                */
/* ------------------------------------------------------------------------- */

/* A way to stop running executions from outside: pass it in
 * kiln_execute_options_t.cancellation, then kiln_cancellation_cancel() makes
 * every execute given it return CANCELLED. One-shot: once cancelled it stays
 * cancelled (an execute given it later returns CANCELLED before running); make a
 * new one for the next execution. The C ABI's only handle that may be used
 * from a signal handler (kiln_cancellation_cancel only). */
typedef struct kiln_cancellation_t kiln_cancellation_t;

/* Creates a cancellation that is not cancelled. The caller owns
 * *out_cancellation and frees it with kiln_cancellation_destroy. Thread-safe. */
KILN_API kiln_status_t* kiln_cancellation_create(kiln_cancellation_t** out_cancellation);

/* Cancels: every execute running with `cancellation`, on any thread, stops at
 * its next check (between steps and at every while-loop back-edge: within
 * microseconds unless one step is long, such as a large matrix product) and
 * returns CANCELLED; later ones return CANCELLED at once. Its arguments are
 * untouched and the client and executable stay usable. Cancelling again does
 * nothing; NULL is a no-op. Thread-safe and async-signal-safe (one atomic store). */
KILN_API void kiln_cancellation_cancel(kiln_cancellation_t* cancellation);

/* Writes 1 to *out_cancelled once kiln_cancellation_cancel was called, else 0. */
KILN_API kiln_status_t* kiln_cancellation_is_cancelled(const kiln_cancellation_t* cancellation,
                                                       int* out_cancelled);

/* Frees a cancellation. It may be destroyed while an execute given it is still
 * running (that execute keeps what it needs, and can then no longer be
 * cancelled). NULL is a no-op. */
KILN_API void kiln_cancellation_destroy(kiln_cancellation_t* cancellation);

typedef struct kiln_execute_options_t {
  size_t struct_size;
  /* Seed of the rng ops: equal seeds give equal numbers. */
  uint64_t rng_seed;
  /* A relative deadline: execute returns DEADLINE_EXCEEDED once this many
   * nanoseconds of the monotonic clock have passed since it was called (checked
   * where cancellation is). 0 = no deadline, and a negative value is
   * INVALID_ARGUMENT. */
  int64_t timeout_ns;
  /* NULL, or a cancellation (see kiln_cancellation_create) that stops this
   * execute when cancelled. Borrowed: the caller keeps owning it. */
  kiln_cancellation_t* cancellation;
  /* (Since 0.2.) The device to run on, a device of the executable's client;
   * NULL = the first argument's device, or the client's first device when
   * there are no arguments. Every argument must live on it (else
   * INVALID_ARGUMENT naming the argument; kiln_buffer_copy_to_device moves
   * one), and the results are made on it. */
  kiln_device_t* device;
  /* (Since 0.2.) Indices of arguments donated to this execution, as XLA's
   * donate_argnums: the execution takes them over, their handles may then
   * only be destroyed (any other use is FAILED_PRECONDITION naming the
   * donation), and their memory is freed as soon as the execution no longer
   * needs it instead of when the caller gets round to destroying them. An
   * index out of range or repeated is INVALID_ARGUMENT, and a failed call
   * donates nothing. */
  const size_t* donated_arguments;
  size_t num_donated_arguments;
} kiln_execute_options_t;
#define KILN_EXECUTE_OPTIONS_INIT {sizeof(kiln_execute_options_t), 0, 0, NULL, NULL, NULL, 0}

/* Runs the executable once on `arguments` (kiln_executable_parameter_count of them,
 * in parameter order, tuples flattened; the buffers are only read). On success the
 * result leaves (tuples flattened, in order) are written to results[0..n) and n to
 * *out_num_results; the caller owns each result buffer and frees it with
 * kiln_buffer_destroy. `results_capacity` must be at least
 * kiln_executable_result_count (else INVALID_ARGUMENT before anything runs).
 * `options` may be NULL. A program that may not end (a while loop) can be
 * bounded with options->timeout_ns or stopped with options->cancellation:
 * execute then returns DEADLINE_EXCEEDED or CANCELLED, writes no results,
 * and leaves the arguments, the executable and the client usable. An argument
 * that an asynchronous execution has not filled yet is waited for (and its
 * error, if that execution failed, is returned). Thread-safe. */
KILN_API kiln_status_t* kiln_executable_execute(kiln_executable_t* executable,
                                                kiln_buffer_t* const* arguments, size_t num_arguments,
                                                const kiln_execute_options_t* options,
                                                kiln_buffer_t** results, size_t results_capacity,
                                                size_t* out_num_results);

/* As kiln_executable_execute, without waiting: checks the arguments (errors
 * in them are returned at once, as from kiln_executable_execute), writes the
 * result buffers and a completion event to *out_event, and returns while the
 * execution runs on the library's worker threads. It starts once every
 * argument is ready, so executions chain: a result may be passed to the next
 * call at once. The results' shapes are known at once; reading one
 * (kiln_buffer_to_host, or an execute using it) waits until it is ready. When
 * the execution fails (a stop, an error at run time, or a failed argument),
 * the event and every result's ready event carry the error and reading a
 * result returns it. The caller owns *out_event and the results. The
 * executable, the arguments and the client may be destroyed at once: the
 * execution keeps what it needs. Thread-safe. (Since 0.2.) */
KILN_API kiln_status_t* kiln_executable_execute_async(kiln_executable_t* executable,
                                                      kiln_buffer_t* const* arguments, size_t num_arguments,
                                                      const kiln_execute_options_t* options,
                                                      kiln_buffer_t** results, size_t results_capacity,
                                                      size_t* out_num_results, kiln_event_t** out_event);

/* ------------------------------------------------------------------------- */
/* User-defined ops                                                          */
/* ------------------------------------------------------------------------- */

/* An op is defined once per process, from any language, in the style of
 * TensorFlow's REGISTER_OP: a name, typed inputs and outputs, attributes with
 * defaults and constraints, an optional shape function and gradient, and
 * documentation. Kernels are registered per backend and element type; the
 * kernel of a call is the one for the element type of its first argument
 * (else of its first result), or the one registered for any type.
 *
 * A call (kiln_op_call_registered) is a custom-call instruction whose target is the op
 * name; every attribute, defaults and inferred type attributes included,
 * travels in its backend_config as a dictionary, so HLO text round-trips:
 *
 *   %z = s32[5] custom-call(s32[5] %x), custom_call_target="ZeroOut",
 *        backend_config="{preserve_index = 1}"
 *
 * Attribute values, in kiln_op_call_registered's `attrs` and in HLO text: `{name = value,
 * ...}` with int `3`, float `0.5` (a '.', 'e', inf or nan makes a float),
 * bool `true`, string `"text"` (C escapes), type `s32` (or int32, float, ...),
 * shape `shape<2,3>`, tensor `tensor<s32[2], [5, 6]>`, list `[1, 2]`.
 * A build checks the call against the definition (operand types and counts,
 * missing attributes without default, attribute kinds, constraints, the shape
 * function) and fails with INVALID_ARGUMENT naming the op and what is wrong;
 * a compile checks the same for HLO text and needs a kernel for the backend
 * and element type (else UNIMPLEMENTED naming op, backend and type).
 * Backends: cpu and interpreter run host-function kernels
 * (kiln_user_op_register_kernel); vulkan runs a SPIR-V compute shader and
 * cuda a PTX kernel (kiln_user_op_register_device_kernel), each launched on
 * the execution's queue or stream between Kiln's own kernels. Registered ops and kernels live until the
 * process exits (there is no unregister); a taken name (op or custom-call target) is ALREADY_EXISTS.
 * Registration and lookup are thread-safe. (Since 0.2.) */
typedef struct kiln_user_op_def_t kiln_user_op_def_t;

/* Kinds of attribute values. */
typedef int32_t kiln_op_attr_kind_t;
enum {
  KILN_OP_ATTR_INT = 1,
  KILN_OP_ATTR_FLOAT = 2,
  KILN_OP_ATTR_BOOL = 3,
  KILN_OP_ATTR_STRING = 4,
  KILN_OP_ATTR_TYPE = 5,
  KILN_OP_ATTR_SHAPE = 6,
  KILN_OP_ATTR_TENSOR = 7,
  KILN_OP_ATTR_LIST = 8
};

/* An attribute value as a kernel, shape function or gradient sees it. The
 * fields of `kind` are set, the others are zero: INT `i`; FLOAT `f`; BOOL `i`
 * (0 or 1); STRING `s` (NUL-terminated, `s_size` bytes without the NUL); TYPE
 * `type`; SHAPE `dims`/`rank`; TENSOR `type`, `dims`/`rank`, `data`/`byte_size`
 * (row-major); LIST `item_kind`, `num_items`, `items` (items have name ""). All
 * pointers live as long as the call they were given to. */
typedef struct kiln_op_attr_t {
  size_t struct_size;
  const char* name;
  kiln_op_attr_kind_t kind;
  int64_t i;
  double f;
  const char* s;
  size_t s_size;
  kiln_element_type_t type;
  const int64_t* dims;
  size_t rank;
  const void* data;
  size_t byte_size;
  kiln_op_attr_kind_t item_kind;
  size_t num_items;
  const struct kiln_op_attr_t* items;
} kiln_op_attr_t;

/* An argument or result of a kernel: dense row-major data. In a shape
 * function `data` is NULL and `byte_size` 0. */
typedef struct kiln_op_buffer_t {
  size_t struct_size;
  kiln_element_type_t type;
  const int64_t* dims;
  size_t rank;
  void* data;
  size_t byte_size;
} kiln_op_buffer_t;

/* The typed call frame of a kernel (after XLA's FFI call frame). Check
 * struct_size before reading fields added later. `backend` is "host" for a
 * host kernel (cpu and interpreter run it in the same host evaluator);
 * `device` and `stream` are NULL for host kernels (reserved for device
 * kernels). `user_data` is the
 * kernel's (kiln_user_op_register_kernel) or, in a shape function, the op's
 * (kiln_user_op_def_set_user_data). Results are allocated by the library; a
 * kernel writes every byte of them. Everything lives for the call only. */
typedef struct kiln_op_call_frame_t {
  size_t struct_size;
  const char* op_name;
  const char* backend;
  void* device;
  void* stream;
  void* user_data;
  size_t num_args;
  const kiln_op_buffer_t* args;
  size_t num_results;
  const kiln_op_buffer_t* results;
  size_t num_attrs;
  const kiln_op_attr_t* attrs;
} kiln_op_call_frame_t;

/* A kernel: returns NULL on success or a status it made with
 * kiln_status_create, which the library takes over; its code and message
 * reach the caller of the execute, prefixed with the op and instruction. It
 * may run on any thread and concurrently with itself; it must not throw or
 * longjmp. */
typedef kiln_status_t* (*kiln_op_kernel_fn)(const kiln_op_call_frame_t* frame);

/* A shape function: the frame's results hold the default dims (those of the
 * argument at the same position, else of argument 0, else a scalar) and the
 * types the definition gives; it changes dims with kiln_user_op_frame_set_result_dims
 * or refuses the call with a status (taken over, as for a kernel), which the
 * build reports naming the op. */
typedef kiln_status_t* (*kiln_op_shape_fn)(kiln_op_call_frame_t* frame);

/* A gradient: builds with `builder` the cotangent of each operand from the
 * operands, the op's outputs (one per output array) and their cotangents
 * (ops of `builder`, parameters of the gradient computation, each of its
 * value's shape; an output no gradient reaches has a zero cotangent), and
 * writes it to operand_grads[i] (each entry starts as KILN_OP_INVALID: an
 * entry left so means no gradient, zero). A cotangent has its operand's
 * shape (else the differentiation fails with INVALID_ARGUMENT naming the op);
 * integer operands get none, whatever is written. `attrs` are the call's
 * (defaults included). `builder` belongs to the library and lives for the
 * call only: use it with kiln_op_* and kiln_builder_get_shape, never destroy
 * or build it. Runs on the thread differentiating (kiln_computation_vjp,
 * kiln_computation_value_and_grad), once per call of the op there. Returns a
 * status as a kernel does; its code and message reach the caller of the
 * differentiation, prefixed with the op and instruction; so does the
 * builder's first error. */
typedef kiln_status_t* (*kiln_op_grad_fn)(kiln_builder_t* builder, const kiln_op_t* operands,
                                          size_t num_operands, const kiln_op_t* outputs,
                                          const kiln_op_t* output_grads, size_t num_outputs,
                                          const kiln_op_attr_t* attrs, size_t num_attrs,
                                          kiln_op_t* operand_grads, void* user_data);

/* A new status with `code` and `message` (copied; NULL is ""), for kernels,
 * shape and gradient functions to return; NULL for KILN_STATUS_OK. The caller
 * owns it (returning it from a callback hands it to the library). */
KILN_API kiln_status_t* kiln_status_create(kiln_status_code_t code, const char* message);

/* A new, empty definition of op `name` (copied; a letter, then letters,
 * digits and '_'). The caller owns *out_def and destroys it with
 * kiln_user_op_def_destroy, registered or not. Not thread-safe per definition. */
KILN_API kiln_status_t* kiln_user_op_def_create(const char* name, kiln_user_op_def_t** out_def);
/* Frees a definition (a registered op keeps its own copy). NULL is a no-op. */
KILN_API void kiln_user_op_def_destroy(kiln_user_op_def_t* def);
/* Adds an attribute, TensorFlow-style: "name: kind [>= min] [= default]" with
 * kind string, int, float, bool, type, shape, tensor, list(kind), a type set
 * {float, int32}, numbertype, realnumbertype, quantizedtype, or a string enum
 * {'apple', 'orange'}; e.g. "preserve_index: int = 0", "N: int >= 2",
 * "T: list(type) >= 1". INVALID_ARGUMENT for a bad spec or default;
 * ALREADY_EXISTS for a name defined twice. */
KILN_API kiln_status_t* kiln_user_op_def_add_attr(kiln_user_op_def_t* def, const char* spec);
/* Adds an input, "name: type" with type a fixed element type ("int32", "f32"),
 * a type attribute ("T"), a list of them ("N * int32", "N * T", N an int
 * attribute) or a list(type) attribute ("T"). Operands of a call are the
 * inputs' tensors in order, lists flattened. */
KILN_API kiln_status_t* kiln_user_op_def_add_input(kiln_user_op_def_t* def, const char* spec);
/* Adds an output, with the same forms as an input. A call's result is the
 * one array when the op has one non-list output, else a tuple of every
 * output array in order. */
KILN_API kiln_status_t* kiln_user_op_def_add_output(kiln_user_op_def_t* def, const char* spec);
/* Sets the documentation text (copied); `kiln info --ops` prints it. */
KILN_API kiln_status_t* kiln_user_op_def_set_doc(kiln_user_op_def_t* def, const char* doc);
/* Sets the shape function (NULL: the default dims, see kiln_op_shape_fn). */
KILN_API kiln_status_t* kiln_user_op_def_set_shape_fn(kiln_user_op_def_t* def, kiln_op_shape_fn fn);
/* Sets the gradient function (NULL: the op has none). It receives the op's
 * user data. kiln_computation_vjp and kiln_computation_value_and_grad
 * differentiate a call of the op with it (after TensorFlow's
 * RegisterGradient): the computation it builds is called in the backward
 * pass. Differentiating through a call of an op without one is
 * INVALID_ARGUMENT ("op 'NAME' ... has no gradient registered"). */
KILN_API kiln_status_t* kiln_user_op_def_set_grad_fn(kiln_user_op_def_t* def, kiln_op_grad_fn fn);
/* Sets the user data the shape and gradient functions receive. `release`
 * (may be NULL) runs once when neither the definition nor a registered op
 * holds it any more: at kiln_user_op_def_destroy when the op was never registered,
 * never for a registered op (ops live until exit), or at once when this call
 * fails. */
KILN_API kiln_status_t* kiln_user_op_def_set_user_data(kiln_user_op_def_t* def, void* user_data,
                                                       kiln_host_release_fn release);
/* Registers a copy of `def` process-wide (the caller still destroys `def`).
 * INVALID_ARGUMENT when an input or output names an attribute that is not
 * there or not of the right kind, or there is no output; ALREADY_EXISTS when
 * the name is a registered op or custom-call target. Thread-safe. */
KILN_API kiln_status_t* kiln_user_op_register(const kiln_user_op_def_t* def);
/* Registers host-function kernel `fn` of op `op` for `backend` ("cpu",
 * "interpreter", or "host" for both) and element type `type`
 * (KILN_TYPE_INVALID: any type). cpu and interpreter run host kernels in the
 * same host evaluator; when both have one for a type, the first registered
 * runs. `user_data` reaches the kernel in its frame; `release` (may be NULL)
 * runs on it if this call fails, else never (kernels live until exit).
 * NOT_FOUND for an op not registered; ALREADY_EXISTS for a taken (backend,
 * type); UNIMPLEMENTED for "vulkan" and "cuda". Thread-safe. */
KILN_API kiln_status_t* kiln_user_op_register_kernel(const char* op, const char* backend,
                                                     kiln_element_type_t type, kiln_op_kernel_fn fn,
                                                     void* user_data, kiln_host_release_fn release);
/* Device kernels: registers `code` as op `op`'s kernel for `backend` and
 * element type `type` (KILN_TYPE_INVALID: any type), chosen as host kernels
 * are. `code` (copied; `code_size` bytes) is a SPIR-V module for "vulkan"
 * and PTX text (no NUL) for "cuda"; `entry` names its GLCompute entry point
 * or `.entry` kernel. Each call of the op is one launch; its frame:
 *
 *   vulkan: descriptor set 0 holds one storage buffer per argument (binding
 *     i), then one per result (binding num_args + j), dense row-major
 *     (std430 arrays of the element type), then the call frame below
 *     (binding num_args + num_results, read-only) when the shader declares
 *     that binding. Push constants, only when the shader declares a
 *     push-constant block, from offset 0: a uint (32-bit) element count per
 *     argument then per result, then each int and bool attribute of the op
 *     in definition order as an int (32-bit; bool 0/1); at most 128 bytes in
 *     all. The workgroup size is specialization constant 0 (declare
 *     `layout(local_size_x_id = 0) in;`), set to the block size; the
 *     dispatch is (grid size, 1, 1) workgroups.
 *   cuda: the kernel's parameters are a .u64 device pointer per argument
 *     then per result, then a .u64 (int64) element count per argument then
 *     per result, then a .u64 (int64) per int and bool attribute in
 *     definition order, then, when the kernel declares one more parameter,
 *     a .u64 device pointer to the call frame below (global memory,
 *     read-only, 8-byte aligned); launched with (grid size, 1, 1) blocks of
 *     (block size, 1, 1) threads, no shared memory.
 *
 * The call frame has what the host frame (kiln_op_call_frame_t) has that a
 * device can use, with no size limit: an array of 64-bit little-endian
 * cells, the same bytes on both backends (in GLSL,
 * `layout(std430, binding = B) readonly buffer Frame { uint words[]; };`
 * sees cell k as words[2k], its low half, and words[2k + 1], its high
 * half; in PTX, cell k is the .u64/.s64/.f64 at byte 8k). Integers are
 * int64 (two's complement; the low word alone is the value when it fits
 * 32 bits). Kiln writes it once, when the executable is loaded: shapes and
 * attributes are fixed at compile time. With A arguments, R results and N
 * attributes:
 *
 *   cell 0: the layout version, 1; cell 1: the frame's size in cells;
 *   cell 2: A; cell 3: R; cell 4: N.
 *   cells 5 + 4b .. 8 + 4b, for buffer b < A + R (arguments then results):
 *     element type (KILN_TYPE_*), rank, element count, and the cell of its
 *     dims (rank cells, outermost first; 0 for a scalar).
 *   cells 5 + 4(A + R) + 4a .. 8 + 4(A + R) + 4a, for attribute a < N, each
 *     attribute of the op in definition order (defaults applied): kind
 *     (KILN_OP_ATTR_*), item kind (a list's KILN_OP_ATTR_* item kind; else
 *     the kind again), count, and the cell of its values (0 when the count
 *     is 0). The values, by kind:
 *       INT, BOOL (0/1), TYPE (its KILN_TYPE_* code): count 1, one cell.
 *       FLOAT: count 1, two cells: the value as an f64, then as an f32 in
 *         the low half of the next cell (so a shader without 64-bit floats
 *         reads it as uintBitsToFloat(words[2k + 2])).
 *       SHAPE: count = rank, one cell per dimension.
 *       LIST of INT, BOOL or TYPE: count = items, one cell each; of FLOAT:
 *         two cells each, as above; of SHAPE: two cells each, the rank and
 *         the cell of its dims.
 *       TENSOR: count = its element count; the cell of its header, four
 *         cells: element type (KILN_TYPE_*), rank, the cell of its dims
 *         (rank cells, outermost first; 0 for a scalar), the cell of its
 *         elements (0 when it has none).
 *       LIST of TENSOR: count = items; the cell of their headers, four
 *         cells each, as above.
 *       STRING and lists of strings have no device meaning: count 0; only
 *         host kernels receive them.
 *   The values follow the records, in the records' order; a kernel finds
 *   them through the cells the records give, never by assuming where.
 *   The tensors' elements come after every other cell, tensor by tensor in
 *   the attributes' order, each from a cell boundary: the dense row-major
 *   bytes the host frame has (KILN_TYPE_PRED one byte per element, 0 or 1),
 *   packed, the last cell padded with zeros (in GLSL, element e of an f32
 *   or int32 tensor whose elements start at cell k is words[2k + e]).
 *
 * The block size is 64 invocations on vulkan and 256 threads on cuda; the
 * grid covers the elements of result 0, one invocation each (ceil(elements
 * / block), at least 1); kiln_user_op_register_device_kernel_with_launch
 * sets either. The kernel writes every element of the results.
 *
 * Errors: INVALID_ARGUMENT for a backend other than "vulkan" or "cuda", an
 * element type that is not an array type, code that is not SPIR-V (size
 * not a multiple of 4, no SPIR-V magic number, a malformed instruction) or
 * not PTX text (a NUL, no .version or .target); NOT_FOUND for an op not
 * registered or an `entry` that the code does not have (the message lists
 * those it has); ALREADY_EXISTS for a taken (backend, type). A compile for
 * vulkan or cuda then fails with INVALID_ARGUMENT naming the op when the
 * SPIR-V validator (Vulkan 1.2) or the driver's PTX JIT refuses the code;
 * when the kernel does not match the frame (a shader binding of another
 * set, past the call frame's binding, or not a storage buffer; a storage
 * buffer whose block ends in an array of floats bound to an argument or
 * result of another type, e.g. `float x[]` for an int32 argument (a float
 * array must be the element type's width, a complex type's parts' width;
 * integer arrays hold any elements as bits, so they are not checked); a PTX entry
 * whose parameters are not 8 bytes each or not as many as the frame's, with
 * or without the call frame's pointer); when the frame does not fit the
 * device (push constants past 128 bytes, or a count or attribute past 32
 * bits there, for a shader that declares push constants; a call frame past
 * the device's storage buffer range; more storage buffers than a shader
 * stage may bind; a grid past the device's limit); and UNIMPLEMENTED naming
 * op, backend and type when the call's element type has no kernel there.
 * Thread-safe. */
KILN_API kiln_status_t* kiln_user_op_register_device_kernel(const char* op, const char* backend,
                                                            kiln_element_type_t type, const void* code,
                                                            size_t code_size, const char* entry);
/* The same with the launch given: `block_size` invocations per workgroup
 * (vulkan) or threads per block (cuda), `grid_size` workgroups or blocks;
 * 0 for either keeps the default above. Thread-safe. (Since 0.2.) */
KILN_API kiln_status_t* kiln_user_op_register_device_kernel_with_launch(
    const char* op, const char* backend, kiln_element_type_t type, const void* code, size_t code_size,
    const char* entry, uint32_t block_size, uint32_t grid_size);
/* Calls registered op `name` with `operands` (the inputs' tensors in order)
 * and attributes `attrs` (a dictionary in the text form above; NULL or "" for
 * none). Errors are the builder's, as for every op. */
KILN_API kiln_op_t kiln_op_call_registered(kiln_builder_t* builder, const char* name,
                                           const kiln_op_t* operands, size_t num_operands, const char* attrs);
/* In a shape function: sets result `index`'s dims (copied). OUT_OF_RANGE for
 * an index past the results; INVALID_ARGUMENT for a negative size or a frame
 * that is not a shape function's. */
KILN_API kiln_status_t* kiln_user_op_frame_set_result_dims(kiln_op_call_frame_t* frame, size_t index,
                                                           const int64_t* dims, size_t rank);
/* A description of every registered op (signature, attributes, kernels,
 * doc), as `kiln info --ops` prints it. The caller owns *out_text and frees it
 * with kiln_string_destroy. Thread-safe. */
KILN_API kiln_status_t* kiln_user_op_registry_describe(char** out_text);

/* ------------------------------------------------------------------------- */
/* Loading Kiln with dlopen                                                  */
/* ------------------------------------------------------------------------- */

/* The file name to pass to dlopen: libkiln with its ABI major version. CMake
 * checks that it matches the library's SONAME. */
#define KILN_LIBRARY_SONAME "libkiln.so.0"

/* dlclose does not unload libkiln: it stays resident until the process exits,
 * and a later dlopen of it reuses what the first one set up (the program cache
 * and the JIT), so loading and unloading it repeatedly costs no memory. */

/* Function-pointer types: one per function above, named after it with `_fn`,
 * for a program that finds the functions with dlsym instead of linking libkiln:
 *
 *   void* address = dlsym(library, "kiln_client_create");
 *   kiln_client_create_fn client_create;
 *   memcpy(&client_create, &address, sizeof address);
 *
 * (samples/c/dlopen_axpy.c loads Kiln this way.) */
typedef const char* (*kiln_version_fn)(void);
typedef uint32_t (*kiln_version_number_fn)(void);
typedef kiln_status_code_t (*kiln_status_code_fn)(const kiln_status_t* status);
typedef const char* (*kiln_status_message_fn)(const kiln_status_t* status);
typedef const char* (*kiln_status_code_name_fn)(kiln_status_code_t code);
typedef void (*kiln_status_destroy_fn)(kiln_status_t* status);
typedef void (*kiln_string_destroy_fn)(char* string);
typedef const char* (*kiln_element_type_name_fn)(kiln_element_type_t type);
typedef size_t (*kiln_element_type_byte_width_fn)(kiln_element_type_t type);
typedef kiln_status_t* (*kiln_backend_count_fn)(size_t* out_count);
typedef kiln_status_t* (*kiln_backend_name_fn)(size_t index, const char** out_name);
typedef kiln_status_t* (*kiln_client_create_fn)(const kiln_client_options_t* options,
                                                kiln_client_t** out_client);
typedef void (*kiln_client_destroy_fn)(kiln_client_t* client);
typedef kiln_status_t* (*kiln_client_backend_name_fn)(const kiln_client_t* client, const char** out_name);
typedef kiln_status_t* (*kiln_client_device_count_fn)(const kiln_client_t* client, size_t* out_count);
typedef kiln_status_t* (*kiln_client_device_description_fn)(const kiln_client_t* client, size_t index,
                                                            const char** out_description);
typedef kiln_status_t* (*kiln_client_transfer_to_infeed_fn)(kiln_client_t* client, kiln_element_type_t type,
                                                            const int64_t* dims, size_t rank,
                                                            const void* data, size_t byte_size);
typedef kiln_status_t* (*kiln_register_custom_call_fn)(const char* name, kiln_custom_call_fn fn);
typedef kiln_status_t* (*kiln_builder_create_fn)(const char* name, kiln_builder_t** out_builder);
typedef void (*kiln_builder_destroy_fn)(kiln_builder_t* builder);
typedef kiln_status_t* (*kiln_builder_first_error_fn)(const kiln_builder_t* builder);
typedef kiln_status_t* (*kiln_builder_get_shape_fn)(const kiln_builder_t* builder, kiln_op_t op,
                                                    kiln_element_type_t* out_type, int64_t* dims,
                                                    size_t dims_capacity, size_t* out_rank);
typedef kiln_status_t* (*kiln_builder_build_fn)(kiln_builder_t* builder, kiln_op_t root,
                                                kiln_computation_t** out_computation);
typedef kiln_op_t (*kiln_op_parameter_fn)(kiln_builder_t* builder, int64_t number, kiln_element_type_t type,
                                          const int64_t* dims, size_t rank, const int64_t* minor_to_major,
                                          const char* name);
typedef kiln_op_t (*kiln_op_constant_fn)(kiln_builder_t* builder, kiln_element_type_t type,
                                         const int64_t* dims, size_t rank, const void* data,
                                         size_t byte_size);
typedef kiln_op_t (*kiln_op_constant_f32_fn)(kiln_builder_t* builder, float value);
typedef kiln_op_t (*kiln_op_constant_f64_fn)(kiln_builder_t* builder, double value);
typedef kiln_op_t (*kiln_op_constant_s32_fn)(kiln_builder_t* builder, int32_t value);
typedef kiln_op_t (*kiln_op_constant_s64_fn)(kiln_builder_t* builder, int64_t value);
typedef kiln_op_t (*kiln_op_constant_u32_fn)(kiln_builder_t* builder, uint32_t value);
typedef kiln_op_t (*kiln_op_constant_pred_fn)(kiln_builder_t* builder, int value);
typedef kiln_op_t (*kiln_op_iota_fn)(kiln_builder_t* builder, kiln_element_type_t type, const int64_t* dims,
                                     size_t rank, int64_t iota_dimension);
typedef kiln_op_t (*kiln_op_add_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_sub_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_mul_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_div_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_rem_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_max_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_min_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_pow_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_atan2_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                      const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_and_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_or_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                   const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_xor_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                    const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_shift_left_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                           const int64_t* broadcast_dimensions,
                                           size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_shift_right_arithmetic_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                                       const int64_t* broadcast_dimensions,
                                                       size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_shift_right_logical_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                                    const int64_t* broadcast_dimensions,
                                                    size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_complex_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                        const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_eq_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                   const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_ne_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                   const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_ge_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                   const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_gt_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                   const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_le_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                   const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_lt_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                   const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_compare_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                        kiln_comparison_direction_t direction, kiln_comparison_type_t type,
                                        const int64_t* broadcast_dimensions, size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_abs_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_neg_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_not_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_sign_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_floor_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_ceil_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_round_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_round_nearest_even_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_exp_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_expm1_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_log_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_log1p_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_logistic_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_sqrt_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_rsqrt_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_cbrt_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_sin_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_cos_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_tan_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_tanh_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_erf_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_is_finite_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_clz_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_popcnt_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_real_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_imag_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_copy_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_cross_replica_sum_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_optimization_barrier_fn)(kiln_builder_t* builder, kiln_op_t x);
typedef kiln_op_t (*kiln_op_select_fn)(kiln_builder_t* builder, kiln_op_t pred, kiln_op_t on_true,
                                       kiln_op_t on_false);
typedef kiln_op_t (*kiln_op_clamp_fn)(kiln_builder_t* builder, kiln_op_t min, kiln_op_t operand,
                                      kiln_op_t max);
typedef kiln_op_t (*kiln_op_convert_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                        kiln_element_type_t new_type);
typedef kiln_op_t (*kiln_op_bitcast_convert_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                kiln_element_type_t new_type);
typedef kiln_op_t (*kiln_op_reduce_precision_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                 int64_t exponent_bits, int64_t mantissa_bits);
typedef kiln_op_t (*kiln_op_broadcast_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                          const int64_t* broadcast_sizes, size_t num_broadcast_sizes);
typedef kiln_op_t (*kiln_op_broadcast_in_dim_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                 const int64_t* out_dims, size_t out_rank,
                                                 const int64_t* broadcast_dimensions,
                                                 size_t num_broadcast_dimensions);
typedef kiln_op_t (*kiln_op_reshape_fn)(kiln_builder_t* builder, kiln_op_t operand, const int64_t* new_sizes,
                                        size_t new_rank);
typedef kiln_op_t (*kiln_op_reshape_with_dimensions_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                        const int64_t* dimensions, size_t num_dimensions,
                                                        const int64_t* new_sizes, size_t new_rank);
typedef kiln_op_t (*kiln_op_collapse_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                         const int64_t* dimensions, size_t num_dimensions);
typedef kiln_op_t (*kiln_op_transpose_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                          const int64_t* permutation, size_t rank);
typedef kiln_op_t (*kiln_op_rev_fn)(kiln_builder_t* builder, kiln_op_t operand, const int64_t* dimensions,
                                    size_t num_dimensions);
typedef kiln_op_t (*kiln_op_concat_in_dim_fn)(kiln_builder_t* builder, const kiln_op_t* operands,
                                              size_t num_operands, int64_t dimension);
typedef kiln_op_t (*kiln_op_pad_fn)(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t padding_value,
                                    const int64_t* edge_low, const int64_t* edge_high,
                                    const int64_t* interior, size_t rank);
typedef kiln_op_t (*kiln_op_slice_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                      const int64_t* start_indices, const int64_t* limit_indices,
                                      const int64_t* strides, size_t rank);
typedef kiln_op_t (*kiln_op_slice_in_dim_fn)(kiln_builder_t* builder, kiln_op_t operand, int64_t start_index,
                                             int64_t limit_index, int64_t stride, int64_t dimension);
typedef kiln_op_t (*kiln_op_dynamic_slice_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                              kiln_op_t start_indices, const int64_t* slice_sizes,
                                              size_t num_slice_sizes);
typedef kiln_op_t (*kiln_op_dynamic_slice_scalars_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                      const kiln_op_t* start_indices,
                                                      size_t num_start_indices, const int64_t* slice_sizes,
                                                      size_t num_slice_sizes);
typedef kiln_op_t (*kiln_op_dynamic_update_slice_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                     kiln_op_t update, kiln_op_t start_indices);
typedef kiln_op_t (*kiln_op_dynamic_update_slice_scalars_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                             kiln_op_t update, const kiln_op_t* start_indices,
                                                             size_t num_start_indices);
typedef kiln_op_t (*kiln_op_get_dimension_size_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                   int64_t dimension);
typedef kiln_op_t (*kiln_op_gather_fn)(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t start_indices,
                                       const kiln_gather_dimension_numbers_t* dimension_numbers,
                                       const int64_t* slice_sizes, size_t num_slice_sizes,
                                       int indices_are_sorted);
typedef kiln_op_t (*kiln_op_scatter_fn)(kiln_builder_t* builder, const kiln_op_t* operands,
                                        size_t num_operands, kiln_op_t scatter_indices,
                                        const kiln_op_t* updates, size_t num_updates,
                                        const kiln_computation_t* update_computation,
                                        const kiln_scatter_dimension_numbers_t* dimension_numbers,
                                        int indices_are_sorted, int unique_indices);
typedef kiln_op_t (*kiln_op_tuple_fn)(kiln_builder_t* builder, const kiln_op_t* elements,
                                      size_t num_elements);
typedef kiln_op_t (*kiln_op_get_tuple_element_fn)(kiln_builder_t* builder, kiln_op_t tuple, int64_t index);
typedef kiln_op_t (*kiln_op_dot_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs);
typedef kiln_op_t (*kiln_op_dot_general_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                            const kiln_dot_dimension_numbers_t* dimension_numbers);
typedef kiln_op_t (*kiln_op_set_precision_fn)(kiln_builder_t* builder, kiln_op_t op,
                                              kiln_precision_t lhs_precision, kiln_precision_t rhs_precision);
typedef kiln_op_t (*kiln_op_conv_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                     const int64_t* window_strides, size_t num_spatial,
                                     kiln_padding_t padding);
typedef kiln_op_t (*kiln_op_conv_with_general_padding_fn)(kiln_builder_t* builder, kiln_op_t lhs,
                                                          kiln_op_t rhs, const int64_t* window_strides,
                                                          const int64_t* padding_low,
                                                          const int64_t* padding_high, size_t num_spatial);
typedef kiln_op_t (*kiln_op_conv_with_general_dimensions_fn)(
    kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs, const int64_t* window_strides, size_t num_spatial,
    kiln_padding_t padding, const kiln_conv_dimension_numbers_t* dimension_numbers);
typedef kiln_op_t (*kiln_op_conv_general_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                             const int64_t* window_strides, const int64_t* padding_low,
                                             const int64_t* padding_high, size_t num_spatial,
                                             const kiln_conv_dimension_numbers_t* dimension_numbers);
typedef kiln_op_t (*kiln_op_conv_general_dilated_fn)(kiln_builder_t* builder, kiln_op_t lhs, kiln_op_t rhs,
                                                     const int64_t* window_strides,
                                                     const int64_t* padding_low, const int64_t* padding_high,
                                                     const int64_t* lhs_dilation, const int64_t* rhs_dilation,
                                                     size_t num_spatial,
                                                     const kiln_conv_dimension_numbers_t* dimension_numbers,
                                                     int64_t feature_group_count, int64_t batch_group_count);
typedef kiln_op_t (*kiln_op_fft_fn)(kiln_builder_t* builder, kiln_op_t operand, kiln_fft_type_t fft_type,
                                    const int64_t* fft_length, size_t num_fft_length);
typedef kiln_op_t (*kiln_op_reduce_fn)(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t init_value,
                                       const kiln_computation_t* computation, const int64_t* dimensions,
                                       size_t num_dimensions);
typedef kiln_op_t (*kiln_op_reduce_variadic_fn)(kiln_builder_t* builder, const kiln_op_t* operands,
                                                const kiln_op_t* init_values, size_t num_operands,
                                                const kiln_computation_t* computation,
                                                const int64_t* dimensions, size_t num_dimensions);
typedef kiln_op_t (*kiln_op_reduce_window_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                              kiln_op_t init_value, const kiln_computation_t* computation,
                                              const int64_t* window_dimensions, const int64_t* window_strides,
                                              size_t rank, kiln_padding_t padding);
typedef kiln_op_t (*kiln_op_reduce_window_general_fn)(
    kiln_builder_t* builder, const kiln_op_t* operands, const kiln_op_t* init_values, size_t num_operands,
    const kiln_computation_t* computation, const int64_t* window_dimensions, const int64_t* window_strides,
    const int64_t* base_dilations, const int64_t* window_dilations, const int64_t* padding_low,
    const int64_t* padding_high, size_t rank);
typedef kiln_op_t (*kiln_op_select_and_scatter_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                   const kiln_computation_t* select,
                                                   const int64_t* window_dimensions,
                                                   const int64_t* window_strides, size_t rank,
                                                   kiln_padding_t padding, kiln_op_t source,
                                                   kiln_op_t init_value, const kiln_computation_t* scatter);
typedef kiln_op_t (*kiln_op_select_and_scatter_general_fn)(
    kiln_builder_t* builder, kiln_op_t operand, const kiln_computation_t* select,
    const int64_t* window_dimensions, const int64_t* window_strides, const int64_t* padding_low,
    const int64_t* padding_high, size_t rank, kiln_op_t source, kiln_op_t init_value,
    const kiln_computation_t* scatter);
typedef kiln_op_t (*kiln_op_map_fn)(kiln_builder_t* builder, const kiln_op_t* operands, size_t num_operands,
                                    const kiln_computation_t* computation, const int64_t* dimensions,
                                    size_t num_dimensions);
typedef kiln_op_t (*kiln_op_sort_fn)(kiln_builder_t* builder, kiln_op_t operand);
typedef kiln_op_t (*kiln_op_sort_variadic_fn)(kiln_builder_t* builder, const kiln_op_t* operands,
                                              size_t num_operands, const kiln_computation_t* comparator,
                                              int64_t dimension, int is_stable);
typedef kiln_op_t (*kiln_op_all_reduce_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                           const kiln_computation_t* computation);
typedef kiln_op_t (*kiln_op_batch_norm_training_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                    kiln_op_t scale, kiln_op_t offset, float epsilon,
                                                    int64_t feature_index);
typedef kiln_op_t (*kiln_op_batch_norm_inference_fn)(kiln_builder_t* builder, kiln_op_t operand,
                                                     kiln_op_t scale, kiln_op_t offset, kiln_op_t mean,
                                                     kiln_op_t variance, float epsilon,
                                                     int64_t feature_index);
typedef kiln_op_t (*kiln_op_batch_norm_grad_fn)(kiln_builder_t* builder, kiln_op_t operand, kiln_op_t scale,
                                                kiln_op_t mean, kiln_op_t variance, kiln_op_t grad_output,
                                                float epsilon, int64_t feature_index);
typedef kiln_op_t (*kiln_op_call_fn)(kiln_builder_t* builder, const kiln_computation_t* computation,
                                     const kiln_op_t* operands, size_t num_operands);
typedef kiln_op_t (*kiln_op_while_fn)(kiln_builder_t* builder, const kiln_computation_t* condition,
                                      const kiln_computation_t* body, kiln_op_t init);
typedef kiln_op_t (*kiln_op_conditional_fn)(kiln_builder_t* builder, kiln_op_t predicate,
                                            kiln_op_t true_operand,
                                            const kiln_computation_t* true_computation,
                                            kiln_op_t false_operand,
                                            const kiln_computation_t* false_computation);
typedef kiln_op_t (*kiln_op_conditional_indexed_fn)(kiln_builder_t* builder, kiln_op_t branch_index,
                                                    const kiln_computation_t* const* branch_computations,
                                                    const kiln_op_t* branch_operands, size_t num_branches);
typedef kiln_op_t (*kiln_op_rng_uniform_fn)(kiln_builder_t* builder, kiln_op_t a, kiln_op_t b,
                                            kiln_element_type_t type, const int64_t* dims, size_t rank);
typedef kiln_op_t (*kiln_op_rng_normal_fn)(kiln_builder_t* builder, kiln_op_t mu, kiln_op_t sigma,
                                           kiln_element_type_t type, const int64_t* dims, size_t rank);
typedef kiln_op_t (*kiln_op_rng_bernoulli_fn)(kiln_builder_t* builder, kiln_op_t p, kiln_element_type_t type,
                                              const int64_t* dims, size_t rank);
typedef kiln_op_t (*kiln_op_rng_bit_generator_fn)(kiln_builder_t* builder, kiln_rng_algorithm_t algorithm,
                                                  kiln_op_t initial_state, kiln_element_type_t type,
                                                  const int64_t* dims, size_t rank);
typedef kiln_op_t (*kiln_op_infeed_fn)(kiln_builder_t* builder, kiln_element_type_t type, const int64_t* dims,
                                       size_t rank, const char* config);
typedef kiln_op_t (*kiln_op_outfeed_fn)(kiln_builder_t* builder, kiln_op_t operand, const char* config);
typedef kiln_op_t (*kiln_op_custom_call_fn)(kiln_builder_t* builder, const char* target,
                                            const kiln_op_t* operands, size_t num_operands,
                                            kiln_element_type_t type, const int64_t* dims, size_t rank,
                                            const char* opaque, int has_side_effect);
typedef kiln_op_t (*kiln_op_after_all_fn)(kiln_builder_t* builder, const kiln_op_t* tokens,
                                          size_t num_tokens);
typedef kiln_op_t (*kiln_op_create_token_fn)(kiln_builder_t* builder);
typedef kiln_status_t* (*kiln_computation_from_hlo_text_fn)(const char* text, size_t text_size,
                                                            kiln_computation_t** out_computation);
typedef kiln_status_t* (*kiln_computation_to_hlo_text_fn)(const kiln_computation_t* computation,
                                                          char** out_text);
typedef kiln_status_t* (*kiln_computation_parameter_count_fn)(const kiln_computation_t* computation,
                                                              size_t* out_count);
typedef void (*kiln_computation_destroy_fn)(kiln_computation_t* computation);
typedef kiln_status_t* (*kiln_computation_vjp_fn)(const kiln_computation_t* computation, const int64_t* wrt,
                                                  size_t num_wrt, kiln_computation_t** out_computation);
typedef kiln_status_t* (*kiln_computation_value_and_grad_fn)(const kiln_computation_t* computation,
                                                             const int64_t* wrt, size_t num_wrt,
                                                             kiln_computation_t** out_computation);
typedef kiln_status_t* (*kiln_computation_jvp_fn)(const kiln_computation_t* computation, const int64_t* wrt,
                                                  size_t num_wrt, kiln_computation_t** out_computation);
typedef kiln_status_t* (*kiln_client_buffer_from_host_fn)(kiln_client_t* client, kiln_element_type_t type,
                                                          const int64_t* dims, size_t rank,
                                                          const int64_t* minor_to_major, const void* data,
                                                          size_t byte_size, kiln_buffer_t** out_buffer);
typedef void (*kiln_buffer_destroy_fn)(kiln_buffer_t* buffer);
typedef kiln_status_t* (*kiln_buffer_element_type_fn)(const kiln_buffer_t* buffer,
                                                      kiln_element_type_t* out_type);
typedef kiln_status_t* (*kiln_buffer_rank_fn)(const kiln_buffer_t* buffer, size_t* out_rank);
typedef kiln_status_t* (*kiln_buffer_dimensions_fn)(const kiln_buffer_t* buffer, int64_t* dims,
                                                    size_t dims_capacity);
typedef kiln_status_t* (*kiln_buffer_minor_to_major_fn)(const kiln_buffer_t* buffer, int64_t* minor_to_major,
                                                        size_t capacity);
typedef kiln_status_t* (*kiln_buffer_byte_size_fn)(const kiln_buffer_t* buffer, size_t* out_byte_size);
typedef kiln_status_t* (*kiln_buffer_to_host_fn)(const kiln_buffer_t* buffer, void* dst,
                                                 size_t dst_byte_size);
typedef kiln_status_t* (*kiln_client_buffer_from_npy_file_fn)(kiln_client_t* client, const char* path,
                                                              kiln_element_type_t expected_type,
                                                              kiln_buffer_t** out_buffer);
typedef kiln_status_t* (*kiln_buffer_to_npy_file_fn)(const kiln_buffer_t* buffer, const char* path);
typedef kiln_status_t* (*kiln_client_compile_fn)(kiln_client_t* client, const kiln_computation_t* computation,
                                                 const kiln_compile_options_t* options,
                                                 kiln_executable_t** out_executable);
typedef void (*kiln_executable_destroy_fn)(kiln_executable_t* executable);
typedef kiln_status_t* (*kiln_executable_parameter_count_fn)(const kiln_executable_t* executable,
                                                             size_t* out_count);
typedef kiln_status_t* (*kiln_executable_result_count_fn)(const kiln_executable_t* executable,
                                                          size_t* out_count);
typedef kiln_status_t* (*kiln_executable_parameter_type_fn)(const kiln_executable_t* executable, size_t index,
                                                            kiln_element_type_t* out_type);
typedef kiln_status_t* (*kiln_executable_execute_fn)(kiln_executable_t* executable,
                                                     kiln_buffer_t* const* arguments, size_t num_arguments,
                                                     const kiln_execute_options_t* options,
                                                     kiln_buffer_t** results, size_t results_capacity,
                                                     size_t* out_num_results);
typedef kiln_status_t* (*kiln_cancellation_create_fn)(kiln_cancellation_t** out_cancellation);
typedef void (*kiln_cancellation_cancel_fn)(kiln_cancellation_t* cancellation);
typedef kiln_status_t* (*kiln_cancellation_is_cancelled_fn)(const kiln_cancellation_t* cancellation,
                                                            int* out_cancelled);
typedef void (*kiln_cancellation_destroy_fn)(kiln_cancellation_t* cancellation);
typedef kiln_status_t* (*kiln_client_device_fn)(const kiln_client_t* client, size_t index,
                                                kiln_device_t** out_device);
typedef kiln_status_t* (*kiln_device_index_fn)(const kiln_device_t* device, size_t* out_index);
typedef kiln_status_t* (*kiln_device_description_fn)(const kiln_device_t* device,
                                                     const char** out_description);
typedef kiln_status_t* (*kiln_device_buffer_from_host_fn)(kiln_device_t* device, kiln_element_type_t type,
                                                          const int64_t* dims, size_t rank,
                                                          const int64_t* minor_to_major, const void* data,
                                                          size_t byte_size, kiln_buffer_t** out_buffer);
typedef kiln_status_t* (*kiln_device_buffer_alias_host_fn)(kiln_device_t* device, kiln_element_type_t type,
                                                           const int64_t* dims, size_t rank, const void* data,
                                                           size_t byte_size, kiln_host_release_fn release,
                                                           void* user_data, kiln_buffer_t** out_buffer);
typedef kiln_status_t* (*kiln_buffer_is_host_alias_fn)(const kiln_buffer_t* buffer, int* out_is_alias);
typedef kiln_status_t* (*kiln_device_buffer_alias_cuda_memory_fn)(
    kiln_device_t* device, kiln_element_type_t type, const int64_t* dims, size_t rank,
    uint64_t device_address, kiln_host_release_fn release, void* user_data, kiln_buffer_t** out_buffer);
typedef kiln_status_t* (*kiln_buffer_cuda_memory_fn)(const kiln_buffer_t* buffer, int* out_ordinal,
                                                     uint64_t* out_device_address);
typedef kiln_status_t* (*kiln_buffer_device_fn)(const kiln_buffer_t* buffer, kiln_device_t** out_device);
typedef kiln_status_t* (*kiln_buffer_copy_to_device_fn)(kiln_buffer_t* buffer, kiln_device_t* device,
                                                        kiln_buffer_t** out_buffer);
typedef kiln_status_t* (*kiln_buffer_ready_event_fn)(const kiln_buffer_t* buffer, kiln_event_t** out_event);
typedef kiln_status_t* (*kiln_event_await_fn)(const kiln_event_t* event);
typedef kiln_status_t* (*kiln_event_is_ready_fn)(const kiln_event_t* event, int* out_ready);
typedef kiln_status_t* (*kiln_event_on_ready_fn)(const kiln_event_t* event, kiln_event_callback_fn callback,
                                                 void* user_data);
typedef void (*kiln_event_destroy_fn)(kiln_event_t* event);
typedef kiln_status_t* (*kiln_safetensors_open_fn)(const char* path, kiln_safetensors_t** out_file);
typedef void (*kiln_safetensors_destroy_fn)(kiln_safetensors_t* file);
typedef kiln_status_t* (*kiln_safetensors_tensor_count_fn)(const kiln_safetensors_t* file, size_t* out_count);
typedef kiln_status_t* (*kiln_safetensors_tensor_name_fn)(const kiln_safetensors_t* file, size_t index,
                                                          const char** out_name);
typedef kiln_status_t* (*kiln_safetensors_metadata_fn)(const kiln_safetensors_t* file, const char* key,
                                                       const char** out_value);
typedef kiln_status_t* (*kiln_safetensors_read_fn)(kiln_safetensors_t* file, kiln_device_t* device,
                                                   const char* name, kiln_buffer_t** out_buffer);
typedef kiln_status_t* (*kiln_safetensors_write_file_fn)(const char* path, const char* const* names,
                                                         kiln_buffer_t* const* buffers, size_t num_buffers,
                                                         const char* const* metadata_keys,
                                                         const char* const* metadata_values,
                                                         size_t num_metadata);
typedef kiln_status_t* (*kiln_buffer_to_dlpack_versioned_fn)(kiln_buffer_t* buffer,
                                                             struct DLManagedTensorVersioned** out_tensor);
typedef kiln_status_t* (*kiln_buffer_to_dlpack_fn)(kiln_buffer_t* buffer,
                                                   struct DLManagedTensor** out_tensor);
typedef kiln_status_t* (*kiln_device_buffer_from_dlpack_versioned_fn)(kiln_device_t* device,
                                                                      struct DLManagedTensorVersioned* tensor,
                                                                      kiln_buffer_t** out_buffer);
typedef kiln_status_t* (*kiln_device_buffer_from_dlpack_fn)(kiln_device_t* device,
                                                            struct DLManagedTensor* tensor,
                                                            kiln_buffer_t** out_buffer);
typedef kiln_status_t* (*kiln_executable_execute_async_fn)(kiln_executable_t* executable,
                                                           kiln_buffer_t* const* arguments,
                                                           size_t num_arguments,
                                                           const kiln_execute_options_t* options,
                                                           kiln_buffer_t** results, size_t results_capacity,
                                                           size_t* out_num_results, kiln_event_t** out_event);
typedef kiln_status_t* (*kiln_status_create_fn)(kiln_status_code_t code, const char* message);
typedef kiln_status_t* (*kiln_user_op_def_create_fn)(const char* name, kiln_user_op_def_t** out_def);
typedef void (*kiln_user_op_def_destroy_fn)(kiln_user_op_def_t* def);
typedef kiln_status_t* (*kiln_user_op_def_add_attr_fn)(kiln_user_op_def_t* def, const char* spec);
typedef kiln_status_t* (*kiln_user_op_def_add_input_fn)(kiln_user_op_def_t* def, const char* spec);
typedef kiln_status_t* (*kiln_user_op_def_add_output_fn)(kiln_user_op_def_t* def, const char* spec);
typedef kiln_status_t* (*kiln_user_op_def_set_doc_fn)(kiln_user_op_def_t* def, const char* doc);
typedef kiln_status_t* (*kiln_user_op_def_set_shape_fn_fn)(kiln_user_op_def_t* def, kiln_op_shape_fn fn);
typedef kiln_status_t* (*kiln_user_op_def_set_grad_fn_fn)(kiln_user_op_def_t* def, kiln_op_grad_fn fn);
typedef kiln_status_t* (*kiln_user_op_def_set_user_data_fn)(kiln_user_op_def_t* def, void* user_data,
                                                            kiln_host_release_fn release);
typedef kiln_status_t* (*kiln_user_op_register_fn)(const kiln_user_op_def_t* def);
typedef kiln_status_t* (*kiln_user_op_register_kernel_fn)(const char* op, const char* backend,
                                                          kiln_element_type_t type, kiln_op_kernel_fn fn,
                                                          void* user_data, kiln_host_release_fn release);
typedef kiln_status_t* (*kiln_user_op_register_device_kernel_fn)(const char* op, const char* backend,
                                                                 kiln_element_type_t type, const void* code,
                                                                 size_t code_size, const char* entry);
typedef kiln_status_t* (*kiln_user_op_register_device_kernel_with_launch_fn)(
    const char* op, const char* backend, kiln_element_type_t type, const void* code, size_t code_size,
    const char* entry, uint32_t block_size, uint32_t grid_size);
typedef kiln_op_t (*kiln_op_call_registered_fn)(kiln_builder_t* builder, const char* name,
                                                const kiln_op_t* operands, size_t num_operands,
                                                const char* attrs);
typedef kiln_status_t* (*kiln_user_op_frame_set_result_dims_fn)(kiln_op_call_frame_t* frame, size_t index,
                                                                const int64_t* dims, size_t rank);
typedef kiln_status_t* (*kiln_user_op_registry_describe_fn)(char** out_text);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_H_ */
