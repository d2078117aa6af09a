package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/** The option and dimension-number structs of kiln.h, and a writer that fills them by name. */
final class Struct {
  static final StructLayout CLIENT_OPTIONS =
      MemoryLayout.structLayout(
          JAVA_LONG.withName("struct_size"),
          ADDRESS.withName("backend"),
          JAVA_INT.withName("num_devices"),
          MemoryLayout.paddingLayout(4)); // C pads the struct to its 8-byte alignment

  static final StructLayout COMPILE_OPTIONS =
      MemoryLayout.structLayout(
          JAVA_LONG.withName("struct_size"),
          JAVA_INT.withName("optimization_level"),
          JAVA_INT.withName("num_threads"),
          JAVA_INT.withName("allow_unsafe_nan_math"),
          MemoryLayout.paddingLayout(4)); // C pads the struct to its 8-byte alignment

  static final StructLayout EXECUTE_OPTIONS =
      MemoryLayout.structLayout(
          JAVA_LONG.withName("struct_size"),
          JAVA_LONG.withName("rng_seed"),
          JAVA_LONG.withName("timeout_ns"),
          ADDRESS.withName("cancellation"),
          ADDRESS.withName("device"),
          ADDRESS.withName("donated_arguments"),
          JAVA_LONG.withName("num_donated_arguments"));

  static final StructLayout GATHER_DIMENSION_NUMBERS =
      MemoryLayout.structLayout(
          JAVA_LONG.withName("struct_size"),
          ADDRESS.withName("offset_dims"),
          JAVA_LONG.withName("num_offset_dims"),
          ADDRESS.withName("collapsed_slice_dims"),
          JAVA_LONG.withName("num_collapsed_slice_dims"),
          ADDRESS.withName("start_index_map"),
          JAVA_LONG.withName("num_start_index_map"),
          JAVA_LONG.withName("index_vector_dim"),
          ADDRESS.withName("operand_batching_dims"),
          JAVA_LONG.withName("num_operand_batching_dims"),
          ADDRESS.withName("start_indices_batching_dims"),
          JAVA_LONG.withName("num_start_indices_batching_dims"));

  static final StructLayout SCATTER_DIMENSION_NUMBERS =
      MemoryLayout.structLayout(
          JAVA_LONG.withName("struct_size"),
          ADDRESS.withName("update_window_dims"),
          JAVA_LONG.withName("num_update_window_dims"),
          ADDRESS.withName("inserted_window_dims"),
          JAVA_LONG.withName("num_inserted_window_dims"),
          ADDRESS.withName("scatter_dims_to_operand_dims"),
          JAVA_LONG.withName("num_scatter_dims_to_operand_dims"),
          JAVA_LONG.withName("index_vector_dim"),
          ADDRESS.withName("input_batching_dims"),
          JAVA_LONG.withName("num_input_batching_dims"),
          ADDRESS.withName("scatter_indices_batching_dims"),
          JAVA_LONG.withName("num_scatter_indices_batching_dims"));

  static final StructLayout DOT_DIMENSION_NUMBERS =
      MemoryLayout.structLayout(
          JAVA_LONG.withName("struct_size"),
          ADDRESS.withName("lhs_contracting_dimensions"),
          JAVA_LONG.withName("num_lhs_contracting_dimensions"),
          ADDRESS.withName("rhs_contracting_dimensions"),
          JAVA_LONG.withName("num_rhs_contracting_dimensions"),
          ADDRESS.withName("lhs_batch_dimensions"),
          JAVA_LONG.withName("num_lhs_batch_dimensions"),
          ADDRESS.withName("rhs_batch_dimensions"),
          JAVA_LONG.withName("num_rhs_batch_dimensions"));

  static final StructLayout CONV_DIMENSION_NUMBERS =
      MemoryLayout.structLayout(
          JAVA_LONG.withName("struct_size"),
          JAVA_LONG.withName("input_batch_dimension"),
          JAVA_LONG.withName("input_feature_dimension"),
          ADDRESS.withName("input_spatial_dimensions"),
          JAVA_LONG.withName("kernel_input_feature_dimension"),
          JAVA_LONG.withName("kernel_output_feature_dimension"),
          ADDRESS.withName("kernel_spatial_dimensions"),
          JAVA_LONG.withName("output_batch_dimension"),
          JAVA_LONG.withName("output_feature_dimension"),
          ADDRESS.withName("output_spatial_dimensions"),
          JAVA_LONG.withName("num_spatial_dimensions"));

  private final Arena arena;
  private final StructLayout layout;
  final MemorySegment segment;

  /** A zeroed struct in {@code arena} with {@code struct_size} set. */
  Struct(Arena arena, StructLayout layout) {
    this.arena = arena;
    this.layout = layout;
    this.segment = arena.allocate(layout);
    segment.set(JAVA_LONG, 0, layout.byteSize());
  }

  private long offset(String field) {
    return layout.byteOffset(PathElement.groupElement(field));
  }

  /** Sets an integer field (32- or 64-bit, as the layout says). */
  Struct set(String field, long value) {
    ValueLayout fieldLayout =
        (ValueLayout) layout.select(PathElement.groupElement(field));
    if (fieldLayout.byteSize() == 4) {
      segment.set(JAVA_INT, offset(field), Math.toIntExact(value));
    } else {
      segment.set(JAVA_LONG, offset(field), value);
    }
    return this;
  }

  /** Sets a pointer field. */
  Struct set(String field, MemorySegment pointer) {
    segment.set(ADDRESS, offset(field), pointer);
    return this;
  }

  /** Sets the pair ({@code field}, {@code num_field}) from an int64 list (null = empty). */
  Struct list(String field, long[] values) {
    set(field, Native.longs(arena, values));
    return set("num_" + field, values == null ? 0 : values.length);
  }
}
