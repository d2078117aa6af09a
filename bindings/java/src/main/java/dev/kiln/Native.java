package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The raw C API: one downcall handle per function of {@code kiln.h}, named exactly as in C.
 *
 * <p>Layouts: {@code P} pointer, {@code I} 32-bit int (every enum typedef, {@code int}),
 * {@code J} 64-bit int ({@code int64_t}, {@code kiln_op_t}), {@code Z} {@code size_t}
 * (64-bit targets only), {@code F}/{@code D} float/double. The library is found through the
 * system property {@code kiln.library.path} or the environment variable {@code
 * KILN_LIBRARY_PATH} (the library file or the directory holding it), else by its SONAME on
 * the loader's search path.
 */
@SuppressWarnings("restricted") // the one place that links native code
final class Native {
  private Native() {}

  static final MemoryLayout P = ADDRESS;
  static final MemoryLayout I = JAVA_INT;
  static final MemoryLayout J = JAVA_LONG;
  static final MemoryLayout Z = JAVA_LONG;
  static final MemoryLayout F = JAVA_FLOAT;
  static final MemoryLayout D = JAVA_DOUBLE;

  /** The ABI major version this binding speaks (KILN_VERSION_MAJOR). */
  static final int ABI_MAJOR = 0;

  /** kiln_op_t of a failed op (KILN_OP_INVALID). */
  static final long OP_INVALID = -1;

  private static final Linker LINKER = Linker.nativeLinker();
  private static final SymbolLookup LIBRARY = load();

  private static SymbolLookup load() {
    if (ADDRESS.byteSize() != 8) {
      throw new UnsatisfiedLinkError("kiln: only 64-bit platforms are supported");
    }
    String configured = System.getProperty("kiln.library.path");
    if (configured == null || configured.isEmpty()) {
      configured = System.getenv("KILN_LIBRARY_PATH");
    }
    try {
      if (configured != null && !configured.isEmpty()) {
        Path path = Path.of(configured);
        if (Files.isDirectory(path)) {
          path = path.resolve(System.mapLibraryName("kiln"));
        }
        return SymbolLookup.libraryLookup(path, Arena.global());
      }
      IllegalArgumentException first = null;
      for (String name : List.of("libkiln.so." + ABI_MAJOR, System.mapLibraryName("kiln"))) {
        try {
          return SymbolLookup.libraryLookup(name, Arena.global());
        } catch (IllegalArgumentException e) {
          first = first == null ? e : first;
        }
      }
      throw first;
    } catch (IllegalArgumentException e) {
      UnsatisfiedLinkError error =
          new UnsatisfiedLinkError(
              "kiln: cannot load libkiln (set -Dkiln.library.path or KILN_LIBRARY_PATH to the"
                  + " library or its directory): "
                  + e.getMessage());
      error.initCause(e);
      throw error;
    }
  }

  private static MemorySegment symbol(String name) {
    return LIBRARY
        .find(name)
        .orElseThrow(() -> new UnsatisfiedLinkError("kiln: libkiln has no symbol " + name));
  }

  private static MethodHandle fn(String name, MemoryLayout result, MemoryLayout... args) {
    return LINKER.downcallHandle(symbol(name), FunctionDescriptor.of(result, args));
  }

  private static MethodHandle fnVoid(String name, MemoryLayout... args) {
    return LINKER.downcallHandle(symbol(name), FunctionDescriptor.ofVoid(args));
  }

  /** A downcall that may read and write Java heap arrays directly (no callback, short). */
  private static MethodHandle fnHeap(String name, MemoryLayout result, MemoryLayout... args) {
    return LINKER.downcallHandle(
        symbol(name), FunctionDescriptor.of(result, args), Linker.Option.critical(true));
  }

  static final MethodHandle kiln_version = fn("kiln_version", P);
  static final MethodHandle kiln_version_number = fn("kiln_version_number", I);
  static final MethodHandle kiln_status_code = fn("kiln_status_code", I, P);
  static final MethodHandle kiln_status_message = fn("kiln_status_message", P, P);
  static final MethodHandle kiln_status_code_name = fn("kiln_status_code_name", P, I);
  static final MethodHandle kiln_status_destroy = fnVoid("kiln_status_destroy", P);
  static final MethodHandle kiln_string_destroy = fnVoid("kiln_string_destroy", P);
  static final MethodHandle kiln_element_type_name = fn("kiln_element_type_name", P, I);
  static final MethodHandle kiln_element_type_byte_width = fn("kiln_element_type_byte_width", Z, I);
  static final MethodHandle kiln_backend_count = fn("kiln_backend_count", P, P);
  static final MethodHandle kiln_backend_name = fn("kiln_backend_name", P, Z, P);
  static final MethodHandle kiln_client_create = fn("kiln_client_create", P, P, P);
  static final MethodHandle kiln_client_destroy = fnVoid("kiln_client_destroy", P);
  static final MethodHandle kiln_client_backend_name = fn("kiln_client_backend_name", P, P, P);
  static final MethodHandle kiln_client_device_count = fn("kiln_client_device_count", P, P, P);
  static final MethodHandle kiln_client_device_description = fn("kiln_client_device_description", P, P, Z, P);
  static final MethodHandle kiln_client_transfer_to_infeed = fnHeap("kiln_client_transfer_to_infeed", P, P, I, P, Z, P, Z);
  static final MethodHandle kiln_register_custom_call = fn("kiln_register_custom_call", P, P, P);
  // User-defined ops.
  static final MethodHandle kiln_status_create = fn("kiln_status_create", P, I, P);
  static final MethodHandle kiln_user_op_def_create = fn("kiln_user_op_def_create", P, P, P);
  static final MethodHandle kiln_user_op_def_destroy = fnVoid("kiln_user_op_def_destroy", P);
  static final MethodHandle kiln_user_op_def_add_attr = fn("kiln_user_op_def_add_attr", P, P, P);
  static final MethodHandle kiln_user_op_def_add_input = fn("kiln_user_op_def_add_input", P, P, P);
  static final MethodHandle kiln_user_op_def_add_output = fn("kiln_user_op_def_add_output", P, P, P);
  static final MethodHandle kiln_user_op_def_set_doc = fn("kiln_user_op_def_set_doc", P, P, P);
  static final MethodHandle kiln_user_op_def_set_shape_fn = fn("kiln_user_op_def_set_shape_fn", P, P, P);
  static final MethodHandle kiln_user_op_def_set_grad_fn = fn("kiln_user_op_def_set_grad_fn", P, P, P);
  static final MethodHandle kiln_user_op_def_set_user_data = fn("kiln_user_op_def_set_user_data", P, P, P, P);
  static final MethodHandle kiln_user_op_register = fn("kiln_user_op_register", P, P);
  static final MethodHandle kiln_user_op_register_kernel = fn("kiln_user_op_register_kernel", P, P, P, I, P, P, P);
  static final MethodHandle kiln_user_op_register_device_kernel = fn("kiln_user_op_register_device_kernel", P, P, P, I, P, Z, P);
  static final MethodHandle kiln_user_op_register_device_kernel_with_launch = fn("kiln_user_op_register_device_kernel_with_launch", P, P, P, I, P, Z, P, I, I);
  static final MethodHandle kiln_op_call_registered = fn("kiln_op_call_registered", J, P, P, P, Z, P);
  static final MethodHandle kiln_user_op_frame_set_result_dims = fn("kiln_user_op_frame_set_result_dims", P, P, Z, P, Z);
  static final MethodHandle kiln_user_op_registry_describe = fn("kiln_user_op_registry_describe", P, P);
  static final MethodHandle kiln_builder_create = fn("kiln_builder_create", P, P, P);
  static final MethodHandle kiln_builder_destroy = fnVoid("kiln_builder_destroy", P);
  static final MethodHandle kiln_builder_first_error = fn("kiln_builder_first_error", P, P);
  static final MethodHandle kiln_builder_get_shape = fn("kiln_builder_get_shape", P, P, J, P, P, Z, P);
  static final MethodHandle kiln_builder_build = fn("kiln_builder_build", P, P, J, P);
  static final MethodHandle kiln_op_parameter = fn("kiln_op_parameter", J, P, J, I, P, Z, P, P);
  static final MethodHandle kiln_op_constant = fnHeap("kiln_op_constant", J, P, I, P, Z, P, Z);
  static final MethodHandle kiln_op_constant_f32 = fn("kiln_op_constant_f32", J, P, F);
  static final MethodHandle kiln_op_constant_f64 = fn("kiln_op_constant_f64", J, P, D);
  static final MethodHandle kiln_op_constant_s32 = fn("kiln_op_constant_s32", J, P, I);
  static final MethodHandle kiln_op_constant_s64 = fn("kiln_op_constant_s64", J, P, J);
  static final MethodHandle kiln_op_constant_u32 = fn("kiln_op_constant_u32", J, P, I);
  static final MethodHandle kiln_op_constant_pred = fn("kiln_op_constant_pred", J, P, I);
  static final MethodHandle kiln_op_iota = fn("kiln_op_iota", J, P, I, P, Z, J);
  static final MethodHandle kiln_op_add = fn("kiln_op_add", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_sub = fn("kiln_op_sub", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_mul = fn("kiln_op_mul", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_div = fn("kiln_op_div", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_rem = fn("kiln_op_rem", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_max = fn("kiln_op_max", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_min = fn("kiln_op_min", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_pow = fn("kiln_op_pow", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_atan2 = fn("kiln_op_atan2", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_and = fn("kiln_op_and", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_or = fn("kiln_op_or", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_xor = fn("kiln_op_xor", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_shift_left = fn("kiln_op_shift_left", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_shift_right_arithmetic = fn("kiln_op_shift_right_arithmetic", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_shift_right_logical = fn("kiln_op_shift_right_logical", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_complex = fn("kiln_op_complex", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_eq = fn("kiln_op_eq", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_ne = fn("kiln_op_ne", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_ge = fn("kiln_op_ge", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_gt = fn("kiln_op_gt", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_le = fn("kiln_op_le", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_lt = fn("kiln_op_lt", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_compare = fn("kiln_op_compare", J, P, J, J, I, I, P, Z);
  static final MethodHandle kiln_op_abs = fn("kiln_op_abs", J, P, J);
  static final MethodHandle kiln_op_neg = fn("kiln_op_neg", J, P, J);
  static final MethodHandle kiln_op_not = fn("kiln_op_not", J, P, J);
  static final MethodHandle kiln_op_sign = fn("kiln_op_sign", J, P, J);
  static final MethodHandle kiln_op_floor = fn("kiln_op_floor", J, P, J);
  static final MethodHandle kiln_op_ceil = fn("kiln_op_ceil", J, P, J);
  static final MethodHandle kiln_op_round = fn("kiln_op_round", J, P, J);
  static final MethodHandle kiln_op_round_nearest_even = fn("kiln_op_round_nearest_even", J, P, J);
  static final MethodHandle kiln_op_exp = fn("kiln_op_exp", J, P, J);
  static final MethodHandle kiln_op_expm1 = fn("kiln_op_expm1", J, P, J);
  static final MethodHandle kiln_op_log = fn("kiln_op_log", J, P, J);
  static final MethodHandle kiln_op_log1p = fn("kiln_op_log1p", J, P, J);
  static final MethodHandle kiln_op_logistic = fn("kiln_op_logistic", J, P, J);
  static final MethodHandle kiln_op_sqrt = fn("kiln_op_sqrt", J, P, J);
  static final MethodHandle kiln_op_rsqrt = fn("kiln_op_rsqrt", J, P, J);
  static final MethodHandle kiln_op_cbrt = fn("kiln_op_cbrt", J, P, J);
  static final MethodHandle kiln_op_sin = fn("kiln_op_sin", J, P, J);
  static final MethodHandle kiln_op_cos = fn("kiln_op_cos", J, P, J);
  static final MethodHandle kiln_op_tan = fn("kiln_op_tan", J, P, J);
  static final MethodHandle kiln_op_tanh = fn("kiln_op_tanh", J, P, J);
  static final MethodHandle kiln_op_erf = fn("kiln_op_erf", J, P, J);
  static final MethodHandle kiln_op_is_finite = fn("kiln_op_is_finite", J, P, J);
  static final MethodHandle kiln_op_clz = fn("kiln_op_clz", J, P, J);
  static final MethodHandle kiln_op_popcnt = fn("kiln_op_popcnt", J, P, J);
  static final MethodHandle kiln_op_real = fn("kiln_op_real", J, P, J);
  static final MethodHandle kiln_op_imag = fn("kiln_op_imag", J, P, J);
  static final MethodHandle kiln_op_copy = fn("kiln_op_copy", J, P, J);
  static final MethodHandle kiln_op_cross_replica_sum = fn("kiln_op_cross_replica_sum", J, P, J);
  static final MethodHandle kiln_op_optimization_barrier = fn("kiln_op_optimization_barrier", J, P, J);
  static final MethodHandle kiln_op_select = fn("kiln_op_select", J, P, J, J, J);
  static final MethodHandle kiln_op_clamp = fn("kiln_op_clamp", J, P, J, J, J);
  static final MethodHandle kiln_op_convert = fn("kiln_op_convert", J, P, J, I);
  static final MethodHandle kiln_op_bitcast_convert = fn("kiln_op_bitcast_convert", J, P, J, I);
  static final MethodHandle kiln_op_reduce_precision = fn("kiln_op_reduce_precision", J, P, J, J, J);
  static final MethodHandle kiln_op_broadcast = fn("kiln_op_broadcast", J, P, J, P, Z);
  static final MethodHandle kiln_op_broadcast_in_dim = fn("kiln_op_broadcast_in_dim", J, P, J, P, Z, P, Z);
  static final MethodHandle kiln_op_reshape = fn("kiln_op_reshape", J, P, J, P, Z);
  static final MethodHandle kiln_op_reshape_with_dimensions = fn("kiln_op_reshape_with_dimensions", J, P, J, P, Z, P, Z);
  static final MethodHandle kiln_op_collapse = fn("kiln_op_collapse", J, P, J, P, Z);
  static final MethodHandle kiln_op_transpose = fn("kiln_op_transpose", J, P, J, P, Z);
  static final MethodHandle kiln_op_rev = fn("kiln_op_rev", J, P, J, P, Z);
  static final MethodHandle kiln_op_concat_in_dim = fn("kiln_op_concat_in_dim", J, P, P, Z, J);
  static final MethodHandle kiln_op_pad = fn("kiln_op_pad", J, P, J, J, P, P, P, Z);
  static final MethodHandle kiln_op_slice = fn("kiln_op_slice", J, P, J, P, P, P, Z);
  static final MethodHandle kiln_op_slice_in_dim = fn("kiln_op_slice_in_dim", J, P, J, J, J, J, J);
  static final MethodHandle kiln_op_dynamic_slice = fn("kiln_op_dynamic_slice", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_dynamic_slice_scalars = fn("kiln_op_dynamic_slice_scalars", J, P, J, P, Z, P, Z);
  static final MethodHandle kiln_op_dynamic_update_slice = fn("kiln_op_dynamic_update_slice", J, P, J, J, J);
  static final MethodHandle kiln_op_dynamic_update_slice_scalars = fn("kiln_op_dynamic_update_slice_scalars", J, P, J, J, P, Z);
  static final MethodHandle kiln_op_get_dimension_size = fn("kiln_op_get_dimension_size", J, P, J, J);
  static final MethodHandle kiln_op_gather = fn("kiln_op_gather", J, P, J, J, P, P, Z, I);
  static final MethodHandle kiln_op_scatter = fn("kiln_op_scatter", J, P, P, Z, J, P, Z, P, P, I, I);
  static final MethodHandle kiln_op_tuple = fn("kiln_op_tuple", J, P, P, Z);
  static final MethodHandle kiln_op_get_tuple_element = fn("kiln_op_get_tuple_element", J, P, J, J);
  static final MethodHandle kiln_op_dot = fn("kiln_op_dot", J, P, J, J);
  static final MethodHandle kiln_op_set_precision = fn("kiln_op_set_precision", J, P, J, I, I);
  static final MethodHandle kiln_op_dot_general = fn("kiln_op_dot_general", J, P, J, J, P);
  static final MethodHandle kiln_op_fft = fn("kiln_op_fft", J, P, J, I, P, Z);
  static final MethodHandle kiln_op_conv = fn("kiln_op_conv", J, P, J, J, P, Z, I);
  static final MethodHandle kiln_op_conv_with_general_padding = fn("kiln_op_conv_with_general_padding", J, P, J, J, P, P, P, Z);
  static final MethodHandle kiln_op_conv_with_general_dimensions = fn("kiln_op_conv_with_general_dimensions", J, P, J, J, P, Z, I, P);
  static final MethodHandle kiln_op_conv_general = fn("kiln_op_conv_general", J, P, J, J, P, P, P, Z, P);
  static final MethodHandle kiln_op_conv_general_dilated = fn("kiln_op_conv_general_dilated", J, P, J, J, P, P, P, P, P, Z, P, J, J);
  static final MethodHandle kiln_op_reduce = fn("kiln_op_reduce", J, P, J, J, P, P, Z);
  static final MethodHandle kiln_op_reduce_variadic = fn("kiln_op_reduce_variadic", J, P, P, P, Z, P, P, Z);
  static final MethodHandle kiln_op_reduce_window = fn("kiln_op_reduce_window", J, P, J, J, P, P, P, Z, I);
  static final MethodHandle kiln_op_reduce_window_general = fn("kiln_op_reduce_window_general", J, P, P, P, Z, P, P, P, P, P, P, P, Z);
  static final MethodHandle kiln_op_select_and_scatter = fn("kiln_op_select_and_scatter", J, P, J, P, P, P, Z, I, J, J, P);
  static final MethodHandle kiln_op_select_and_scatter_general = fn("kiln_op_select_and_scatter_general", J, P, J, P, P, P, P, P, Z, J, J, P);
  static final MethodHandle kiln_op_map = fn("kiln_op_map", J, P, P, Z, P, P, Z);
  static final MethodHandle kiln_op_sort = fn("kiln_op_sort", J, P, J);
  static final MethodHandle kiln_op_sort_variadic = fn("kiln_op_sort_variadic", J, P, P, Z, P, J, I);
  static final MethodHandle kiln_op_all_reduce = fn("kiln_op_all_reduce", J, P, J, P);
  static final MethodHandle kiln_op_batch_norm_training = fn("kiln_op_batch_norm_training", J, P, J, J, J, F, J);
  static final MethodHandle kiln_op_batch_norm_inference = fn("kiln_op_batch_norm_inference", J, P, J, J, J, J, J, F, J);
  static final MethodHandle kiln_op_batch_norm_grad = fn("kiln_op_batch_norm_grad", J, P, J, J, J, J, J, F, J);
  static final MethodHandle kiln_op_call = fn("kiln_op_call", J, P, P, P, Z);
  static final MethodHandle kiln_op_while = fn("kiln_op_while", J, P, P, P, J);
  static final MethodHandle kiln_op_conditional = fn("kiln_op_conditional", J, P, J, J, P, J, P);
  static final MethodHandle kiln_op_conditional_indexed = fn("kiln_op_conditional_indexed", J, P, J, P, P, Z);
  static final MethodHandle kiln_op_rng_uniform = fn("kiln_op_rng_uniform", J, P, J, J, I, P, Z);
  static final MethodHandle kiln_op_rng_normal = fn("kiln_op_rng_normal", J, P, J, J, I, P, Z);
  static final MethodHandle kiln_op_rng_bernoulli = fn("kiln_op_rng_bernoulli", J, P, J, I, P, Z);
  static final MethodHandle kiln_op_rng_bit_generator = fn("kiln_op_rng_bit_generator", J, P, I, J, I, P, Z);
  static final MethodHandle kiln_op_infeed = fn("kiln_op_infeed", J, P, I, P, Z, P);
  static final MethodHandle kiln_op_outfeed = fn("kiln_op_outfeed", J, P, J, P);
  static final MethodHandle kiln_op_custom_call = fn("kiln_op_custom_call", J, P, P, P, Z, I, P, Z, P, I);
  static final MethodHandle kiln_op_after_all = fn("kiln_op_after_all", J, P, P, Z);
  static final MethodHandle kiln_op_create_token = fn("kiln_op_create_token", J, P);
  static final MethodHandle kiln_computation_from_hlo_text = fn("kiln_computation_from_hlo_text", P, P, Z, P);
  static final MethodHandle kiln_computation_to_hlo_text = fn("kiln_computation_to_hlo_text", P, P, P);
  static final MethodHandle kiln_computation_parameter_count = fn("kiln_computation_parameter_count", P, P, P);
  static final MethodHandle kiln_computation_destroy = fnVoid("kiln_computation_destroy", P);
  static final MethodHandle kiln_computation_vjp = fn("kiln_computation_vjp", P, P, P, Z, P);
  static final MethodHandle kiln_computation_value_and_grad = fn("kiln_computation_value_and_grad", P, P, P, Z, P);
  static final MethodHandle kiln_computation_jvp = fn("kiln_computation_jvp", P, P, P, Z, P);
  static final MethodHandle kiln_client_buffer_from_host = fnHeap("kiln_client_buffer_from_host", P, P, I, P, Z, P, P, Z, P);
  static final MethodHandle kiln_buffer_destroy = fnVoid("kiln_buffer_destroy", P);
  static final MethodHandle kiln_buffer_element_type = fn("kiln_buffer_element_type", P, P, P);
  static final MethodHandle kiln_buffer_rank = fn("kiln_buffer_rank", P, P, P);
  static final MethodHandle kiln_buffer_dimensions = fn("kiln_buffer_dimensions", P, P, P, Z);
  static final MethodHandle kiln_buffer_minor_to_major = fn("kiln_buffer_minor_to_major", P, P, P, Z);
  static final MethodHandle kiln_buffer_byte_size = fn("kiln_buffer_byte_size", P, P, P);
  static final MethodHandle kiln_buffer_to_host = fnHeap("kiln_buffer_to_host", P, P, P, Z);
  static final MethodHandle kiln_client_buffer_from_npy_file = fn("kiln_client_buffer_from_npy_file", P, P, P, I, P);
  static final MethodHandle kiln_buffer_to_npy_file = fn("kiln_buffer_to_npy_file", P, P, P);
  static final MethodHandle kiln_client_compile = fn("kiln_client_compile", P, P, P, P, P);
  static final MethodHandle kiln_executable_destroy = fnVoid("kiln_executable_destroy", P);
  static final MethodHandle kiln_executable_parameter_count = fn("kiln_executable_parameter_count", P, P, P);
  static final MethodHandle kiln_executable_result_count = fn("kiln_executable_result_count", P, P, P);
  static final MethodHandle kiln_executable_parameter_type = fn("kiln_executable_parameter_type", P, P, Z, P);
  static final MethodHandle kiln_cancellation_create = fn("kiln_cancellation_create", P, P);
  static final MethodHandle kiln_cancellation_cancel = fnVoid("kiln_cancellation_cancel", P);
  static final MethodHandle kiln_cancellation_is_cancelled = fn("kiln_cancellation_is_cancelled", P, P, P);
  static final MethodHandle kiln_cancellation_destroy = fnVoid("kiln_cancellation_destroy", P);
  static final MethodHandle kiln_executable_execute = fn("kiln_executable_execute", P, P, P, Z, P, P, Z, P);
  static final MethodHandle kiln_client_device = fn("kiln_client_device", P, P, Z, P);
  static final MethodHandle kiln_device_index = fn("kiln_device_index", P, P, P);
  static final MethodHandle kiln_device_description = fn("kiln_device_description", P, P, P);
  static final MethodHandle kiln_device_buffer_from_host = fnHeap("kiln_device_buffer_from_host", P, P, I, P, Z, P, P, Z, P);
  // Not critical: the release callback may run during the call, and the data must be native.
  static final MethodHandle kiln_device_buffer_alias_host = fn("kiln_device_buffer_alias_host", P, P, I, P, Z, P, Z, P, P, P);
  static final MethodHandle kiln_buffer_is_host_alias = fn("kiln_buffer_is_host_alias", P, P, P);
  // CUDA device memory (0.2): declared for the header's full coverage; no wrapper yet.
  static final MethodHandle kiln_device_buffer_alias_cuda_memory =
      fn("kiln_device_buffer_alias_cuda_memory", P, P, I, P, Z, J, P, P, P);
  static final MethodHandle kiln_buffer_cuda_memory = fn("kiln_buffer_cuda_memory", P, P, P, P);
  static final MethodHandle kiln_buffer_to_dlpack_versioned = fn("kiln_buffer_to_dlpack_versioned", P, P, P);
  static final MethodHandle kiln_buffer_to_dlpack = fn("kiln_buffer_to_dlpack", P, P, P);
  // Not critical: the tensor's deleter (perhaps an upcall) may run during the call.
  static final MethodHandle kiln_device_buffer_from_dlpack_versioned = fn("kiln_device_buffer_from_dlpack_versioned", P, P, P, P);
  static final MethodHandle kiln_device_buffer_from_dlpack = fn("kiln_device_buffer_from_dlpack", P, P, P, P);
  static final MethodHandle kiln_buffer_device = fn("kiln_buffer_device", P, P, P);
  static final MethodHandle kiln_buffer_copy_to_device = fn("kiln_buffer_copy_to_device", P, P, P, P);
  static final MethodHandle kiln_buffer_ready_event = fn("kiln_buffer_ready_event", P, P, P);
  static final MethodHandle kiln_event_await = fn("kiln_event_await", P, P);
  static final MethodHandle kiln_event_is_ready = fn("kiln_event_is_ready", P, P, P);
  static final MethodHandle kiln_event_on_ready = fn("kiln_event_on_ready", P, P, P, P);
  static final MethodHandle kiln_event_destroy = fnVoid("kiln_event_destroy", P);
  static final MethodHandle kiln_executable_execute_async = fn("kiln_executable_execute_async", P, P, P, Z, P, P, Z, P, P);
  static final MethodHandle kiln_safetensors_open = fn("kiln_safetensors_open", P, P, P);
  static final MethodHandle kiln_safetensors_destroy = fnVoid("kiln_safetensors_destroy", P);
  static final MethodHandle kiln_safetensors_tensor_count = fn("kiln_safetensors_tensor_count", P, P, P);
  static final MethodHandle kiln_safetensors_tensor_name = fn("kiln_safetensors_tensor_name", P, P, Z, P);
  static final MethodHandle kiln_safetensors_metadata = fn("kiln_safetensors_metadata", P, P, P, P);
  static final MethodHandle kiln_safetensors_read = fn("kiln_safetensors_read", P, P, P, P, P);
  // Not critical: it waits until the buffers are ready.
  static final MethodHandle kiln_safetensors_write_file = fn("kiln_safetensors_write_file", P, P, P, P, Z, P, P, Z);

  static {
    int major;
    try {
      major = (int) kiln_version_number.invokeExact() / 10000;
    } catch (Throwable t) {
      throw new UnsatisfiedLinkError("kiln: cannot query the library version: " + t);
    }
    if (major != ABI_MAJOR) {
      throw new UnsatisfiedLinkError(
          "kiln: libkiln ABI major " + major + " does not match this binding's " + ABI_MAJOR);
    }
  }

  /** A NUL-terminated C string owned by someone else, read as UTF-8. */
  static String string(MemorySegment cString) {
    return cString.address() == 0 ? null : cString.reinterpret(Long.MAX_VALUE).getString(0);
  }

  /**
   * Turns a returned {@code kiln_status_t*} into a {@link KilnException} (and frees it); does
   * nothing for NULL (success).
   */
  static void check(MemorySegment status) {
    if (status.address() == 0) {
      return;
    }
    try {
      int code = (int) kiln_status_code.invokeExact(status);
      String message = string((MemorySegment) kiln_status_message.invokeExact(status));
      throw new KilnException(StatusCode.of(code), message);
    } catch (KilnException e) {
      throw e;
    } catch (Throwable t) {
      throw unexpected(t);
    } finally {
      destroyStatus(status);
    }
  }

  /** The failure a borrowed {@code kiln_status_t*} describes (not freed); null for NULL. */
  static KilnException exception(MemorySegment borrowedStatus) {
    if (borrowedStatus.address() == 0) {
      return null;
    }
    try {
      int code = (int) kiln_status_code.invokeExact(borrowedStatus);
      String message = string((MemorySegment) kiln_status_message.invokeExact(borrowedStatus));
      return new KilnException(StatusCode.of(code), message);
    } catch (Throwable t) {
      throw unexpected(t);
    }
  }

  private static void destroyStatus(MemorySegment status) {
    try {
      kiln_status_destroy.invokeExact(status);
    } catch (Throwable t) {
      throw unexpected(t);
    }
  }

  /** Rethrows what a downcall can throw: unchecked exceptions as they are. */
  static RuntimeException unexpected(Throwable t) {
    if (t instanceof RuntimeException r) {
      return r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new IllegalStateException("kiln: unexpected checked exception from a downcall", t);
  }

  /** A native int64 array holding {@code values}; NULL for null or an empty array. */
  static MemorySegment longs(Arena arena, long[] values) {
    return values == null || values.length == 0
        ? MemorySegment.NULL
        : arena.allocateFrom(JAVA_LONG, values);
  }

  /** A NUL-terminated UTF-8 copy of {@code s}; NULL for null. */
  static MemorySegment cString(Arena arena, String s) {
    return s == null ? MemorySegment.NULL : arena.allocateFrom(s);
  }

  /** A native pointer-sized slot for an out-parameter, zeroed. */
  static MemorySegment outPointer(Arena arena) {
    return arena.allocate(ADDRESS);
  }
}
