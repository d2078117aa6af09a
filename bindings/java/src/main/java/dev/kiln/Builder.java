package dev.kiln;

import static dev.kiln.Native.longs;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Optional;

/**
 * Builds one computation op by op, mirroring the op set of {@code kiln.h} (XlaBuilder style).
 * Not thread-safe: use a builder from one thread at a time.
 *
 * <p>Ops are cheap {@link Op} values. The library checks every op as it is added; the first
 * failing op throws a {@link KilnException} (its code and message come from the library and
 * name the op). That error stays sticky: every later op throws it again, and so does {@link
 * #build()}.
 *
 * <p>Integer lists map to the C lists as they are: an empty array or null means "none" where
 * the C API accepts NULL (strides and dilations then default to 1, paddings to 0). Nested
 * computations are copied by the library, so they may be closed right after the call.
 */
public final class Builder extends NativeHandle {
  // The library's builder (a gradient function's): closing it never destroys it.
  private final boolean borrowed;

  private Builder(MemorySegment handle) {
    this(handle, false);
  }

  private Builder(MemorySegment handle, boolean borrowed) {
    super(handle);
    this.borrowed = borrowed;
  }

  /** A view of a builder the library owns, for one call; close() only invalidates it. */
  static Builder borrowed(MemorySegment handle) {
    return new Builder(handle, true);
  }

  /** A builder of a computation named {@code name}. */
  public static Builder create(String name) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment) Native.kiln_builder_create.invokeExact(arena.allocateFrom(name), out));
      return new Builder(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  @Override
  void destroy(MemorySegment h) throws Throwable {
    if (!borrowed) {
      Native.kiln_builder_destroy.invokeExact(h);
    }
  }

  /** The first error of this builder, if an op failed. */
  public Optional<KilnException> firstError() {
    try {
      Native.check((MemorySegment) Native.kiln_builder_first_error.invokeExact(handle()));
      return Optional.empty();
    } catch (KilnException e) {
      return Optional.of(e);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Builds and verifies the computation rooted at the last op added. */
  public Computation build() {
    return build(null);
  }

  /** Builds and verifies the computation rooted at {@code root} (null: the last op). */
  public Computation build(Op root) {
    long rootId = root == null ? Native.OP_INVALID : id(root);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_builder_build.invokeExact(handle(), rootId, out));
      return new Computation(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The shape of {@code op}; a tuple reports {@link ElementType#TUPLE} and no dimensions. */
  public Shape shape(Op op) {
    long opId = id(op);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment type = arena.allocate(JAVA_INT);
      MemorySegment rank = arena.allocate(JAVA_LONG);
      Native.check(
          (MemorySegment)
              Native.kiln_builder_get_shape.invokeExact(
                  handle(), opId, type, MemorySegment.NULL, 0L, rank));
      long n = rank.get(JAVA_LONG, 0);
      long[] dims = new long[(int) n];
      if (n > 0) {
        MemorySegment out = arena.allocate(JAVA_LONG, n);
        Native.check(
            (MemorySegment)
                Native.kiln_builder_get_shape.invokeExact(
                    handle(), opId, MemorySegment.NULL, out, n, MemorySegment.NULL));
        dims = out.toArray(JAVA_LONG);
      }
      return Shape.of(ElementType.of(type.get(JAVA_INT, 0)), dims);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  // ---------------------------------------------------------------------------------------
  // Marshalling helpers.

  @FunctionalInterface
  private interface OpCall {
    long call(MemorySegment builder, Arena arena) throws Throwable;
  }

  /** Runs one op call; KILN_OP_INVALID becomes the builder's (sticky) error. */
  private Op op(OpCall call) {
    MemorySegment b = handle();
    long id;
    try (Arena arena = Arena.ofConfined()) {
      id = call.call(b, arena);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
    if (id == Native.OP_INVALID) {
      throw firstError()
          .orElseGet(
              () -> new KilnException(StatusCode.INTERNAL, "kiln: op failed without an error"));
    }
    return new Op(this, id);
  }

  // An op of another builder goes to the library too, which refuses it
  // (INVALID_ARGUMENT naming the op and both builders) like any bad operand.
  private static long id(Op op) {
    return op.id();
  }

  private MemorySegment ids(Arena arena, List<Op> ops) {
    long[] values = new long[ops.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = id(ops.get(i));
    }
    return longs(arena, values);
  }

  private static long len(long[] values) {
    return values == null ? 0 : values.length;
  }

  private static MemorySegment computation(Computation c) {
    return c == null ? MemorySegment.NULL : c.handle();
  }

  private static long rank(long[] first, long[]... others) {
    for (long[] other : others) {
      if (other != null && other.length != first.length) {
        throw new IllegalArgumentException(
            "kiln: per-dimension lists must have equal lengths (" + first.length + " vs "
                + other.length + ")");
      }
    }
    return first.length;
  }

  private static int flag(boolean b) {
    return b ? 1 : 0;
  }

  private Op unary(MethodHandle h, Op x) {
    long xi = id(x);
    return op((b, a) -> (long) h.invokeExact(b, xi));
  }

  private Op binary(MethodHandle h, Op lhs, Op rhs, long[] broadcastDimensions) {
    long l = id(lhs);
    long r = id(rhs);
    return op(
        (b, a) ->
            (long)
                h.invokeExact(b, l, r, longs(a, broadcastDimensions), len(broadcastDimensions)));
  }

  // ---------------------------------------------------------------------------------------
  // Leaves.

  /** Parameter {@code number} of the given shape. */
  public Op parameter(long number, Shape shape) {
    return parameter(number, shape, null, null);
  }

  /** Parameter {@code number} of the given shape, named {@code name}. */
  public Op parameter(long number, Shape shape, String name) {
    return parameter(number, shape, null, name);
  }

  /**
   * Parameter {@code number} of the given shape with a layout ({@code minorToMajor}, null: the
   * default major-to-minor) and a name (may be null).
   */
  public Op parameter(long number, Shape shape, long[] minorToMajor, String name) {
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_parameter.invokeExact(
                    b,
                    number,
                    shape.elementType().value(),
                    longs(a, shape.dims()),
                    (long) shape.rank(),
                    longs(a, minorToMajor),
                    Native.cString(a, name)));
  }

  /** A constant array from raw row-major bytes in native byte order. */
  public Op constant(Shape shape, MemorySegment data) {
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_constant.invokeExact(
                    b,
                    shape.elementType().value(),
                    longs(a, shape.dims()),
                    (long) shape.rank(),
                    data,
                    data.byteSize()));
  }

  /** A constant f32 array of shape {@code dims}. */
  public Op constant(float[] data, long... dims) {
    return constant(Shape.of(ElementType.F32, dims), MemorySegment.ofArray(data));
  }

  /** A constant f64 array of shape {@code dims}. */
  public Op constant(double[] data, long... dims) {
    return constant(Shape.of(ElementType.F64, dims), MemorySegment.ofArray(data));
  }

  /** A constant s32 array of shape {@code dims}. */
  public Op constant(int[] data, long... dims) {
    return constant(Shape.of(ElementType.S32, dims), MemorySegment.ofArray(data));
  }

  /** A constant s64 array of shape {@code dims}. */
  public Op constant(long[] data, long... dims) {
    return constant(Shape.of(ElementType.S64, dims), MemorySegment.ofArray(data));
  }

  /** A constant pred array of shape {@code dims}. */
  public Op constant(boolean[] data, long... dims) {
    return constant(Shape.of(ElementType.PRED, dims), Client.bytes(data));
  }

  /** An f32 scalar constant. */
  public Op constant(float value) {
    return op((b, a) -> (long) Native.kiln_op_constant_f32.invokeExact(b, value));
  }

  /** An f64 scalar constant. */
  public Op constant(double value) {
    return op((b, a) -> (long) Native.kiln_op_constant_f64.invokeExact(b, value));
  }

  /** An s32 scalar constant. */
  public Op constant(int value) {
    return op((b, a) -> (long) Native.kiln_op_constant_s32.invokeExact(b, value));
  }

  /** An s64 scalar constant. */
  public Op constant(long value) {
    return op((b, a) -> (long) Native.kiln_op_constant_s64.invokeExact(b, value));
  }

  /** A u32 scalar constant holding the bits of {@code value}. */
  public Op constantU32(int value) {
    return op((b, a) -> (long) Native.kiln_op_constant_u32.invokeExact(b, value));
  }

  /** A pred scalar constant. */
  public Op constant(boolean value) {
    return op((b, a) -> (long) Native.kiln_op_constant_pred.invokeExact(b, flag(value)));
  }

  /** An array of {@code shape} counting 0, 1, ... along {@code iotaDimension}. */
  public Op iota(Shape shape, long iotaDimension) {
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_iota.invokeExact(
                    b,
                    shape.elementType().value(),
                    longs(a, shape.dims()),
                    (long) shape.rank(),
                    iotaDimension));
  }

  // ---------------------------------------------------------------------------------------
  // Elementwise binary ops: broadcastDimensions maps the lower-rank operand's dimensions into
  // the higher-rank one's; none means equal shapes or a scalar.

  /** lhs + rhs. */
  public Op add(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_add, lhs, rhs, broadcastDimensions);
  }

  /** lhs - rhs. */
  public Op sub(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_sub, lhs, rhs, broadcastDimensions);
  }

  /** lhs * rhs. */
  public Op mul(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_mul, lhs, rhs, broadcastDimensions);
  }

  /** lhs / rhs. */
  public Op div(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_div, lhs, rhs, broadcastDimensions);
  }

  /** Remainder with the sign of the dividend. */
  public Op rem(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_rem, lhs, rhs, broadcastDimensions);
  }

  /** Elementwise maximum. */
  public Op max(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_max, lhs, rhs, broadcastDimensions);
  }

  /** Elementwise minimum. */
  public Op min(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_min, lhs, rhs, broadcastDimensions);
  }

  /** lhs raised to rhs. */
  public Op pow(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_pow, lhs, rhs, broadcastDimensions);
  }

  /** atan2(lhs, rhs). */
  public Op atan2(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_atan2, lhs, rhs, broadcastDimensions);
  }

  /** Logical or bitwise and. */
  public Op and(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_and, lhs, rhs, broadcastDimensions);
  }

  /** Logical or bitwise or. */
  public Op or(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_or, lhs, rhs, broadcastDimensions);
  }

  /** Logical or bitwise exclusive or. */
  public Op xor(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_xor, lhs, rhs, broadcastDimensions);
  }

  /** lhs shifted left by rhs bits. */
  public Op shiftLeft(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_shift_left, lhs, rhs, broadcastDimensions);
  }

  /** lhs shifted right by rhs bits, keeping the sign. */
  public Op shiftRightArithmetic(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_shift_right_arithmetic, lhs, rhs, broadcastDimensions);
  }

  /** lhs shifted right by rhs bits, filling with zeros. */
  public Op shiftRightLogical(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_shift_right_logical, lhs, rhs, broadcastDimensions);
  }

  /** A complex number from (real, imaginary). */
  public Op complex(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_complex, lhs, rhs, broadcastDimensions);
  }

  /** lhs == rhs (pred). */
  public Op eq(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_eq, lhs, rhs, broadcastDimensions);
  }

  /** lhs != rhs (pred). */
  public Op ne(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_ne, lhs, rhs, broadcastDimensions);
  }

  /** lhs &gt;= rhs (pred). */
  public Op ge(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_ge, lhs, rhs, broadcastDimensions);
  }

  /** lhs &gt; rhs (pred). */
  public Op gt(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_gt, lhs, rhs, broadcastDimensions);
  }

  /** lhs &lt;= rhs (pred). */
  public Op le(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_le, lhs, rhs, broadcastDimensions);
  }

  /** lhs &lt; rhs (pred). */
  public Op lt(Op lhs, Op rhs, long... broadcastDimensions) {
    return binary(Native.kiln_op_lt, lhs, rhs, broadcastDimensions);
  }

  /** A comparison with an explicit direction and comparison type. */
  public Op compare(
      Op lhs,
      Op rhs,
      ComparisonDirection direction,
      ComparisonType type,
      long... broadcastDimensions) {
    long l = id(lhs);
    long r = id(rhs);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_compare.invokeExact(
                    b,
                    l,
                    r,
                    direction.value(),
                    type.value(),
                    longs(a, broadcastDimensions),
                    len(broadcastDimensions)));
  }

  // ---------------------------------------------------------------------------------------
  // Elementwise unary ops.

  /** |x|. */
  public Op abs(Op x) {
    return unary(Native.kiln_op_abs, x);
  }

  /** -x. */
  public Op neg(Op x) {
    return unary(Native.kiln_op_neg, x);
  }

  /** Logical or bitwise not. */
  public Op not(Op x) {
    return unary(Native.kiln_op_not, x);
  }

  /** The sign of x (-1, 0 or 1). */
  public Op sign(Op x) {
    return unary(Native.kiln_op_sign, x);
  }

  /** Rounds toward negative infinity. */
  public Op floor(Op x) {
    return unary(Native.kiln_op_floor, x);
  }

  /** Rounds toward positive infinity. */
  public Op ceil(Op x) {
    return unary(Native.kiln_op_ceil, x);
  }

  /** Rounds half away from zero. */
  public Op round(Op x) {
    return unary(Native.kiln_op_round, x);
  }

  /** Rounds half to even. */
  public Op roundNearestEven(Op x) {
    return unary(Native.kiln_op_round_nearest_even, x);
  }

  /** e^x. */
  public Op exp(Op x) {
    return unary(Native.kiln_op_exp, x);
  }

  /** e^x - 1. */
  public Op expm1(Op x) {
    return unary(Native.kiln_op_expm1, x);
  }

  /** Natural logarithm. */
  public Op log(Op x) {
    return unary(Native.kiln_op_log, x);
  }

  /** log(1 + x). */
  public Op log1p(Op x) {
    return unary(Native.kiln_op_log1p, x);
  }

  /** 1 / (1 + e^-x). */
  public Op logistic(Op x) {
    return unary(Native.kiln_op_logistic, x);
  }

  /** Square root. */
  public Op sqrt(Op x) {
    return unary(Native.kiln_op_sqrt, x);
  }

  /** Reciprocal square root. */
  public Op rsqrt(Op x) {
    return unary(Native.kiln_op_rsqrt, x);
  }

  /** Cube root. */
  public Op cbrt(Op x) {
    return unary(Native.kiln_op_cbrt, x);
  }

  /** Sine. */
  public Op sin(Op x) {
    return unary(Native.kiln_op_sin, x);
  }

  /** Cosine. */
  public Op cos(Op x) {
    return unary(Native.kiln_op_cos, x);
  }

  /** Tangent. */
  public Op tan(Op x) {
    return unary(Native.kiln_op_tan, x);
  }

  /** Hyperbolic tangent. */
  public Op tanh(Op x) {
    return unary(Native.kiln_op_tanh, x);
  }

  /** Error function. */
  public Op erf(Op x) {
    return unary(Native.kiln_op_erf, x);
  }

  /** Whether x is finite (pred). */
  public Op isFinite(Op x) {
    return unary(Native.kiln_op_is_finite, x);
  }

  /** Count of leading zero bits. */
  public Op clz(Op x) {
    return unary(Native.kiln_op_clz, x);
  }

  /** Count of one bits. */
  public Op popcnt(Op x) {
    return unary(Native.kiln_op_popcnt, x);
  }

  /** Real part. */
  public Op real(Op x) {
    return unary(Native.kiln_op_real, x);
  }

  /** Imaginary part. */
  public Op imag(Op x) {
    return unary(Native.kiln_op_imag, x);
  }

  /** A copy of x. */
  public Op copy(Op x) {
    return unary(Native.kiln_op_copy, x);
  }

  /** Sum across replicas (identity with one replica). */
  public Op crossReplicaSum(Op x) {
    return unary(Native.kiln_op_cross_replica_sum, x);
  }

  /** Passes its (possibly tuple) operand through unchanged. */
  public Op optimizationBarrier(Op x) {
    return unary(Native.kiln_op_optimization_barrier, x);
  }

  // ---------------------------------------------------------------------------------------
  // Ternary ops and type changes.

  /** pred ? onTrue : onFalse, elementwise. */
  public Op select(Op pred, Op onTrue, Op onFalse) {
    long p = id(pred);
    long t = id(onTrue);
    long f = id(onFalse);
    return op((b, a) -> (long) Native.kiln_op_select.invokeExact(b, p, t, f));
  }

  /** min(max(operand, min), max). */
  public Op clamp(Op min, Op operand, Op max) {
    long lo = id(min);
    long x = id(operand);
    long hi = id(max);
    return op((b, a) -> (long) Native.kiln_op_clamp.invokeExact(b, lo, x, hi));
  }

  /** Converts each element to {@code newType}. */
  public Op convert(Op operand, ElementType newType) {
    long x = id(operand);
    return op((b, a) -> (long) Native.kiln_op_convert.invokeExact(b, x, newType.value()));
  }

  /** Reinterprets the bits of each element as {@code newType}. */
  public Op bitcastConvert(Op operand, ElementType newType) {
    long x = id(operand);
    return op(
        (b, a) -> (long) Native.kiln_op_bitcast_convert.invokeExact(b, x, newType.value()));
  }

  /** Rounds to a floating-point format with the given exponent and mantissa bits. */
  public Op reducePrecision(Op operand, long exponentBits, long mantissaBits) {
    long x = id(operand);
    return op(
        (b, a) ->
            (long) Native.kiln_op_reduce_precision.invokeExact(b, x, exponentBits, mantissaBits));
  }

  // ---------------------------------------------------------------------------------------
  // Shape manipulation.

  /** Adds major dimensions of sizes {@code broadcastSizes}. */
  public Op broadcast(Op operand, long... broadcastSizes) {
    long x = id(operand);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_broadcast.invokeExact(
                    b, x, longs(a, broadcastSizes), len(broadcastSizes)));
  }

  /** Broadcasts to {@code outDims}; operand dimension i maps to broadcastDimensions[i]. */
  public Op broadcastInDim(Op operand, long[] outDims, long[] broadcastDimensions) {
    long x = id(operand);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_broadcast_in_dim.invokeExact(
                    b,
                    x,
                    longs(a, outDims),
                    len(outDims),
                    longs(a, broadcastDimensions),
                    len(broadcastDimensions)));
  }

  /** Reshapes to {@code newSizes} (row-major order). */
  public Op reshape(Op operand, long... newSizes) {
    long x = id(operand);
    return op(
        (b, a) ->
            (long) Native.kiln_op_reshape.invokeExact(b, x, longs(a, newSizes), len(newSizes)));
  }

  /** Transposes by {@code dimensions} first, then reshapes to {@code newSizes}. */
  public Op reshape(Op operand, long[] dimensions, long[] newSizes) {
    long x = id(operand);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_reshape_with_dimensions.invokeExact(
                    b, x, longs(a, dimensions), len(dimensions), longs(a, newSizes), len(newSizes)));
  }

  /** Merges the consecutive {@code dimensions} into one. */
  public Op collapse(Op operand, long... dimensions) {
    long x = id(operand);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_collapse.invokeExact(b, x, longs(a, dimensions), len(dimensions)));
  }

  /** Permutes the dimensions. */
  public Op transpose(Op operand, long... permutation) {
    long x = id(operand);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_transpose.invokeExact(b, x, longs(a, permutation), len(permutation)));
  }

  /** Reverses the order of elements along {@code dimensions}. */
  public Op rev(Op operand, long... dimensions) {
    long x = id(operand);
    return op(
        (b, a) -> (long) Native.kiln_op_rev.invokeExact(b, x, longs(a, dimensions), len(dimensions)));
  }

  /** Concatenates {@code operands} along {@code dimension}. */
  public Op concatInDim(List<Op> operands, long dimension) {
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_concat_in_dim.invokeExact(
                    b, ids(a, operands), (long) operands.size(), dimension));
  }

  /**
   * Pads dimension i by edgeLow[i], edgeHigh[i] (negative removes) and interior[i] copies of
   * the scalar {@code paddingValue}.
   */
  public Op pad(Op operand, Op paddingValue, long[] edgeLow, long[] edgeHigh, long[] interior) {
    long x = id(operand);
    long v = id(paddingValue);
    long rank = rank(edgeLow, edgeHigh, interior);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_pad.invokeExact(
                    b, x, v, longs(a, edgeLow), longs(a, edgeHigh), longs(a, interior), rank));
  }

  /** A static slice; {@code strides} may be null (all 1). */
  public Op slice(Op operand, long[] startIndices, long[] limitIndices, long[] strides) {
    long x = id(operand);
    long rank = rank(startIndices, limitIndices, strides);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_slice.invokeExact(
                    b, x, longs(a, startIndices), longs(a, limitIndices), longs(a, strides), rank));
  }

  /** A static slice of one dimension. */
  public Op sliceInDim(Op operand, long startIndex, long limitIndex, long stride, long dimension) {
    long x = id(operand);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_slice_in_dim.invokeExact(
                    b, x, startIndex, limitIndex, stride, dimension));
  }

  /**
   * A dynamic slice; {@code startIndices} is a rank-1 integer array with one entry per
   * dimension, clamped so the slice stays in bounds.
   */
  public Op dynamicSlice(Op operand, Op startIndices, long... sliceSizes) {
    long x = id(operand);
    long s = id(startIndices);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_dynamic_slice.invokeExact(
                    b, x, s, longs(a, sliceSizes), len(sliceSizes)));
  }

  /** A dynamic slice with one scalar start index op per dimension (HLO form). */
  public Op dynamicSlice(Op operand, List<Op> startIndices, long... sliceSizes) {
    long x = id(operand);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_dynamic_slice_scalars.invokeExact(
                    b,
                    x,
                    ids(a, startIndices),
                    (long) startIndices.size(),
                    longs(a, sliceSizes),
                    len(sliceSizes)));
  }

  /** Writes {@code update} into {@code operand} at the rank-1 {@code startIndices}. */
  public Op dynamicUpdateSlice(Op operand, Op update, Op startIndices) {
    long x = id(operand);
    long u = id(update);
    long s = id(startIndices);
    return op((b, a) -> (long) Native.kiln_op_dynamic_update_slice.invokeExact(b, x, u, s));
  }

  /** Writes {@code update} into {@code operand} at one scalar start index op per dimension. */
  public Op dynamicUpdateSlice(Op operand, Op update, List<Op> startIndices) {
    long x = id(operand);
    long u = id(update);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_dynamic_update_slice_scalars.invokeExact(
                    b, x, u, ids(a, startIndices), (long) startIndices.size()));
  }

  /** The size of dimension {@code dimension} as an s32 scalar. */
  public Op getDimensionSize(Op operand, long dimension) {
    long x = id(operand);
    return op((b, a) -> (long) Native.kiln_op_get_dimension_size.invokeExact(b, x, dimension));
  }

  /** XLA Gather. */
  public Op gather(
      Op operand,
      Op startIndices,
      GatherDimensionNumbers dimensionNumbers,
      long[] sliceSizes,
      boolean indicesAreSorted) {
    long x = id(operand);
    long s = id(startIndices);
    return op(
        (b, a) -> {
          MemorySegment dn =
              new Struct(a, Struct.GATHER_DIMENSION_NUMBERS)
                  .list("offset_dims", dimensionNumbers.offsetDims())
                  .list("collapsed_slice_dims", dimensionNumbers.collapsedSliceDims())
                  .list("start_index_map", dimensionNumbers.startIndexMap())
                  .set("index_vector_dim", dimensionNumbers.indexVectorDim())
                  .list("operand_batching_dims", dimensionNumbers.operandBatchingDims())
                  .list("start_indices_batching_dims", dimensionNumbers.startIndicesBatchingDims())
                  .segment;
          return (long)
              Native.kiln_op_gather.invokeExact(
                  b, x, s, dn, longs(a, sliceSizes), len(sliceSizes), flag(indicesAreSorted));
        });
  }

  /** XLA Scatter of one operand. */
  public Op scatter(
      Op operand,
      Op scatterIndices,
      Op updates,
      Computation updateComputation,
      ScatterDimensionNumbers dimensionNumbers,
      boolean indicesAreSorted,
      boolean uniqueIndices) {
    return scatter(
        List.of(operand),
        scatterIndices,
        List.of(updates),
        updateComputation,
        dimensionNumbers,
        indicesAreSorted,
        uniqueIndices);
  }

  /**
   * Variadic XLA Scatter: as many updates as operands; {@code updateComputation} combines (old
   * values..., new values...) scalars. Returns a tuple when there are several operands.
   */
  public Op scatter(
      List<Op> operands,
      Op scatterIndices,
      List<Op> updates,
      Computation updateComputation,
      ScatterDimensionNumbers dimensionNumbers,
      boolean indicesAreSorted,
      boolean uniqueIndices) {
    long s = id(scatterIndices);
    return op(
        (b, a) -> {
          MemorySegment dn =
              new Struct(a, Struct.SCATTER_DIMENSION_NUMBERS)
                  .list("update_window_dims", dimensionNumbers.updateWindowDims())
                  .list("inserted_window_dims", dimensionNumbers.insertedWindowDims())
                  .list(
                      "scatter_dims_to_operand_dims", dimensionNumbers.scatterDimsToOperandDims())
                  .set("index_vector_dim", dimensionNumbers.indexVectorDim())
                  .list("input_batching_dims", dimensionNumbers.inputBatchingDims())
                  .list(
                      "scatter_indices_batching_dims",
                      dimensionNumbers.scatterIndicesBatchingDims())
                  .segment;
          return (long)
              Native.kiln_op_scatter.invokeExact(
                  b,
                  ids(a, operands),
                  (long) operands.size(),
                  s,
                  ids(a, updates),
                  (long) updates.size(),
                  computation(updateComputation),
                  dn,
                  flag(indicesAreSorted),
                  flag(uniqueIndices));
        });
  }

  // ---------------------------------------------------------------------------------------
  // Tuples and contractions.

  /** A tuple of {@code elements}. */
  public Op tuple(Op... elements) {
    List<Op> list = List.of(elements);
    return op(
        (b, a) -> (long) Native.kiln_op_tuple.invokeExact(b, ids(a, list), (long) list.size()));
  }

  /** Element {@code index} of a tuple. */
  public Op getTupleElement(Op tuple, long index) {
    long t = id(tuple);
    return op((b, a) -> (long) Native.kiln_op_get_tuple_element.invokeExact(b, t, index));
  }

  /** Vector/matrix dot product. */
  public Op dot(Op lhs, Op rhs) {
    long l = id(lhs);
    long r = id(rhs);
    return op((b, a) -> (long) Native.kiln_op_dot.invokeExact(b, l, r));
  }

  /**
   * Sets the precision of a dot's or convolution's two operands and returns the same op; any
   * other op fails with INVALID_ARGUMENT.
   */
  public Op setPrecision(Op op, Precision lhs, Precision rhs) {
    long o = id(op);
    int l = lhs.value();
    int r = rhs.value();
    return op((b, a) -> (long) Native.kiln_op_set_precision.invokeExact(b, o, l, r));
  }

  /** General dot with explicit contracting and batch dimensions. */
  public Op dotGeneral(Op lhs, Op rhs, DotDimensionNumbers dimensionNumbers) {
    long l = id(lhs);
    long r = id(rhs);
    return op(
        (b, a) -> {
          MemorySegment dn =
              new Struct(a, Struct.DOT_DIMENSION_NUMBERS)
                  .list("lhs_contracting_dimensions", dimensionNumbers.lhsContractingDimensions())
                  .list("rhs_contracting_dimensions", dimensionNumbers.rhsContractingDimensions())
                  .list("lhs_batch_dimensions", dimensionNumbers.lhsBatchDimensions())
                  .list("rhs_batch_dimensions", dimensionNumbers.rhsBatchDimensions())
                  .segment;
          return (long) Native.kiln_op_dot_general.invokeExact(b, l, r, dn);
        });
  }

  private static MemorySegment conv(Arena a, ConvDimensionNumbers d) {
    long spatial =
        rank(d.inputSpatialDimensions(), d.kernelSpatialDimensions(), d.outputSpatialDimensions());
    return new Struct(a, Struct.CONV_DIMENSION_NUMBERS)
        .set("input_batch_dimension", d.inputBatchDimension())
        .set("input_feature_dimension", d.inputFeatureDimension())
        .set("input_spatial_dimensions", longs(a, d.inputSpatialDimensions()))
        .set("kernel_input_feature_dimension", d.kernelInputFeatureDimension())
        .set("kernel_output_feature_dimension", d.kernelOutputFeatureDimension())
        .set("kernel_spatial_dimensions", longs(a, d.kernelSpatialDimensions()))
        .set("output_batch_dimension", d.outputBatchDimension())
        .set("output_feature_dimension", d.outputFeatureDimension())
        .set("output_spatial_dimensions", longs(a, d.outputSpatialDimensions()))
        .set("num_spatial_dimensions", spatial)
        .segment;
  }

  /**
   * XLA's fft over the operand's {@code fftLength.length} (1 to 3) trailing dimensions, as NumPy's
   * fftn, ifftn, rfftn and irfftn compute it: FFT and IFFT keep a complex shape; RFFT takes f32/f64
   * to c64/c128 with the last dimension {@code fftLength[last]/2+1}; IRFFT takes that back.
   */
  public Op fft(Op operand, FftType fftType, long[] fftLength) {
    long x = id(operand);
    int type = fftType.value();
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_fft.invokeExact(b, x, type, longs(a, fftLength), len(fftLength)));
  }

  /** Convolution of an NCHW input with an OIHW kernel, no dilation. */
  public Op conv(Op lhs, Op rhs, long[] windowStrides, Padding padding) {
    long l = id(lhs);
    long r = id(rhs);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_conv.invokeExact(
                    b, l, r, longs(a, windowStrides), len(windowStrides), padding.value()));
  }

  /** Convolution with explicit (low, high) padding per spatial dimension. */
  public Op convWithGeneralPadding(
      Op lhs, Op rhs, long[] windowStrides, long[] paddingLow, long[] paddingHigh) {
    long l = id(lhs);
    long r = id(rhs);
    long spatial = rank(windowStrides, paddingLow, paddingHigh);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_conv_with_general_padding.invokeExact(
                    b,
                    l,
                    r,
                    longs(a, windowStrides),
                    longs(a, paddingLow),
                    longs(a, paddingHigh),
                    spatial));
  }

  /** Convolution with a padding scheme and explicit dimension numbers. */
  public Op convWithGeneralDimensions(
      Op lhs, Op rhs, long[] windowStrides, Padding padding, ConvDimensionNumbers dimensionNumbers) {
    long l = id(lhs);
    long r = id(rhs);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_conv_with_general_dimensions.invokeExact(
                    b,
                    l,
                    r,
                    longs(a, windowStrides),
                    len(windowStrides),
                    padding.value(),
                    conv(a, dimensionNumbers)));
  }

  /** Convolution with explicit padding and dimension numbers. */
  public Op convGeneral(
      Op lhs,
      Op rhs,
      long[] windowStrides,
      long[] paddingLow,
      long[] paddingHigh,
      ConvDimensionNumbers dimensionNumbers) {
    long l = id(lhs);
    long r = id(rhs);
    long spatial = rank(windowStrides, paddingLow, paddingHigh);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_conv_general.invokeExact(
                    b,
                    l,
                    r,
                    longs(a, windowStrides),
                    longs(a, paddingLow),
                    longs(a, paddingHigh),
                    spatial,
                    conv(a, dimensionNumbers)));
  }

  /**
   * The full convolution: dilations may be null (all 1), group counts are 1 for an ordinary
   * convolution.
   */
  public Op convGeneralDilated(
      Op lhs,
      Op rhs,
      long[] windowStrides,
      long[] paddingLow,
      long[] paddingHigh,
      long[] lhsDilation,
      long[] rhsDilation,
      ConvDimensionNumbers dimensionNumbers,
      long featureGroupCount,
      long batchGroupCount) {
    long l = id(lhs);
    long r = id(rhs);
    long spatial = rank(windowStrides, paddingLow, paddingHigh, lhsDilation, rhsDilation);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_conv_general_dilated.invokeExact(
                    b,
                    l,
                    r,
                    longs(a, windowStrides),
                    longs(a, paddingLow),
                    longs(a, paddingHigh),
                    longs(a, lhsDilation),
                    longs(a, rhsDilation),
                    spatial,
                    conv(a, dimensionNumbers),
                    featureGroupCount,
                    batchGroupCount));
  }

  // ---------------------------------------------------------------------------------------
  // Reductions, windows, maps and sorts.

  /** Reduces {@code dimensions} with {@code computation} starting from {@code initValue}. */
  public Op reduce(Op operand, Op initValue, Computation computation, long... dimensions) {
    long x = id(operand);
    long init = id(initValue);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_reduce.invokeExact(
                    b, x, init, computation(computation), longs(a, dimensions), len(dimensions)));
  }

  /** Variadic reduce: N operands and init values, a computation of 2N scalars to an N-tuple. */
  public Op reduce(
      List<Op> operands, List<Op> initValues, Computation computation, long... dimensions) {
    if (operands.size() != initValues.size()) {
      throw new IllegalArgumentException("kiln: reduce needs one init value per operand");
    }
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_reduce_variadic.invokeExact(
                    b,
                    ids(a, operands),
                    ids(a, initValues),
                    (long) operands.size(),
                    computation(computation),
                    longs(a, dimensions),
                    len(dimensions)));
  }

  /** Seed ReduceWindow with a padding scheme. */
  public Op reduceWindow(
      Op operand,
      Op initValue,
      Computation computation,
      long[] windowDimensions,
      long[] windowStrides,
      Padding padding) {
    long x = id(operand);
    long init = id(initValue);
    long rank = rank(windowDimensions, windowStrides);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_reduce_window.invokeExact(
                    b,
                    x,
                    init,
                    computation(computation),
                    longs(a, windowDimensions),
                    longs(a, windowStrides),
                    rank,
                    padding.value()));
  }

  /**
   * General ReduceWindow over N operands; strides, dilations and paddings may be null (1, 1,
   * 0).
   */
  public Op reduceWindow(
      List<Op> operands,
      List<Op> initValues,
      Computation computation,
      long[] windowDimensions,
      long[] windowStrides,
      long[] baseDilations,
      long[] windowDilations,
      long[] paddingLow,
      long[] paddingHigh) {
    if (operands.size() != initValues.size()) {
      throw new IllegalArgumentException("kiln: reduceWindow needs one init value per operand");
    }
    long rank =
        rank(
            windowDimensions,
            windowStrides,
            baseDilations,
            windowDilations,
            paddingLow,
            paddingHigh);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_reduce_window_general.invokeExact(
                    b,
                    ids(a, operands),
                    ids(a, initValues),
                    (long) operands.size(),
                    computation(computation),
                    longs(a, windowDimensions),
                    longs(a, windowStrides),
                    longs(a, baseDilations),
                    longs(a, windowDilations),
                    longs(a, paddingLow),
                    longs(a, paddingHigh),
                    rank));
  }

  /** Seed SelectAndScatter with a padding scheme. */
  public Op selectAndScatter(
      Op operand,
      Computation select,
      long[] windowDimensions,
      long[] windowStrides,
      Padding padding,
      Op source,
      Op initValue,
      Computation scatter) {
    long x = id(operand);
    long src = id(source);
    long init = id(initValue);
    long rank = rank(windowDimensions, windowStrides);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_select_and_scatter.invokeExact(
                    b,
                    x,
                    computation(select),
                    longs(a, windowDimensions),
                    longs(a, windowStrides),
                    rank,
                    padding.value(),
                    src,
                    init,
                    computation(scatter)));
  }

  /** SelectAndScatter with explicit (low, high) padding per dimension. */
  public Op selectAndScatter(
      Op operand,
      Computation select,
      long[] windowDimensions,
      long[] windowStrides,
      long[] paddingLow,
      long[] paddingHigh,
      Op source,
      Op initValue,
      Computation scatter) {
    long x = id(operand);
    long src = id(source);
    long init = id(initValue);
    long rank = rank(windowDimensions, windowStrides, paddingLow, paddingHigh);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_select_and_scatter_general.invokeExact(
                    b,
                    x,
                    computation(select),
                    longs(a, windowDimensions),
                    longs(a, windowStrides),
                    longs(a, paddingLow),
                    longs(a, paddingHigh),
                    rank,
                    src,
                    init,
                    computation(scatter)));
  }

  /** Applies the scalar {@code computation} elementwise over {@code operands}. */
  public Op map(List<Op> operands, Computation computation, long... dimensions) {
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_map.invokeExact(
                    b,
                    ids(a, operands),
                    (long) operands.size(),
                    computation(computation),
                    longs(a, dimensions),
                    len(dimensions)));
  }

  /** Sorts ascending along the last dimension. */
  public Op sort(Op operand) {
    return unary(Native.kiln_op_sort, operand);
  }

  /** Sorts N operands by {@code comparator} (2N scalars to pred) along {@code dimension}. */
  public Op sort(List<Op> operands, Computation comparator, long dimension, boolean isStable) {
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_sort_variadic.invokeExact(
                    b,
                    ids(a, operands),
                    (long) operands.size(),
                    computation(comparator),
                    dimension,
                    flag(isStable)));
  }

  /** Reduces across replicas with {@code computation}. */
  public Op allReduce(Op operand, Computation computation) {
    long x = id(operand);
    return op(
        (b, a) -> (long) Native.kiln_op_all_reduce.invokeExact(b, x, computation(computation)));
  }

  // ---------------------------------------------------------------------------------------
  // Batch normalisation.

  /** Batch norm for training: a tuple (output, batch mean, batch variance). */
  public Op batchNormTraining(Op operand, Op scale, Op offset, float epsilon, long featureIndex) {
    long x = id(operand);
    long s = id(scale);
    long o = id(offset);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_batch_norm_training.invokeExact(b, x, s, o, epsilon, featureIndex));
  }

  /** Batch norm with given mean and variance. */
  public Op batchNormInference(
      Op operand,
      Op scale,
      Op offset,
      Op mean,
      Op variance,
      float epsilon,
      long featureIndex) {
    long x = id(operand);
    long s = id(scale);
    long o = id(offset);
    long m = id(mean);
    long v = id(variance);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_batch_norm_inference.invokeExact(
                    b, x, s, o, m, v, epsilon, featureIndex));
  }

  /** Gradients of batch norm: a tuple (grad operand, grad scale, grad offset). */
  public Op batchNormGrad(
      Op operand,
      Op scale,
      Op mean,
      Op variance,
      Op gradOutput,
      float epsilon,
      long featureIndex) {
    long x = id(operand);
    long s = id(scale);
    long m = id(mean);
    long v = id(variance);
    long g = id(gradOutput);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_batch_norm_grad.invokeExact(b, x, s, m, v, g, epsilon, featureIndex));
  }

  // ---------------------------------------------------------------------------------------
  // Control flow.

  /** Calls {@code computation} on {@code operands}. */
  public Op call(Computation computation, Op... operands) {
    List<Op> list = List.of(operands);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_call.invokeExact(
                    b, computation(computation), ids(a, list), (long) list.size()));
  }

  /** Runs {@code body} on the loop state while {@code condition} holds. */
  public Op whileLoop(Computation condition, Computation body, Op init) {
    long i = id(init);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_while.invokeExact(b, computation(condition), computation(body), i));
  }

  /** Runs one of two computations depending on a pred scalar. */
  public Op conditional(
      Op predicate,
      Op trueOperand,
      Computation trueComputation,
      Op falseOperand,
      Computation falseComputation) {
    long p = id(predicate);
    long t = id(trueOperand);
    long f = id(falseOperand);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_conditional.invokeExact(
                    b, p, t, computation(trueComputation), f, computation(falseComputation)));
  }

  /**
   * Runs branch {@code branchIndex} (an s32 scalar; out of range runs the last) on its operand.
   */
  public Op conditional(Op branchIndex, List<Computation> branches, List<Op> operands) {
    if (branches.size() != operands.size()) {
      throw new IllegalArgumentException("kiln: conditional needs one operand per branch");
    }
    long index = id(branchIndex);
    return op(
        (b, a) -> {
          MemorySegment comps = a.allocate(ADDRESS, Math.max(1, branches.size()));
          for (int i = 0; i < branches.size(); i++) {
            comps.setAtIndex(ADDRESS, i, computation(branches.get(i)));
          }
          return (long)
              Native.kiln_op_conditional_indexed.invokeExact(
                  b, index, comps, ids(a, operands), (long) branches.size());
        });
  }

  // ---------------------------------------------------------------------------------------
  // Random numbers (deterministic for a given execute seed).

  /** Uniform numbers in [a, b) of {@code shape}. */
  public Op rngUniform(Op low, Op high, Shape shape) {
    long l = id(low);
    long h = id(high);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_rng_uniform.invokeExact(
                    b,
                    l,
                    h,
                    shape.elementType().value(),
                    longs(a, shape.dims()),
                    (long) shape.rank()));
  }

  /** Normal numbers with mean {@code mu} and deviation {@code sigma} of {@code shape}. */
  public Op rngNormal(Op mu, Op sigma, Shape shape) {
    long m = id(mu);
    long s = id(sigma);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_rng_normal.invokeExact(
                    b,
                    m,
                    s,
                    shape.elementType().value(),
                    longs(a, shape.dims()),
                    (long) shape.rank()));
  }

  /** Bernoulli draws with probability {@code p} of {@code shape}. */
  public Op rngBernoulli(Op p, Shape shape) {
    long pi = id(p);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_rng_bernoulli.invokeExact(
                    b, pi, shape.elementType().value(), longs(a, shape.dims()), (long) shape.rank()));
  }

  /** The tuple (new state, bits of {@code shape}). */
  public Op rngBitGenerator(RngAlgorithm algorithm, Op initialState, Shape shape) {
    long s = id(initialState);
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_rng_bit_generator.invokeExact(
                    b,
                    algorithm.value(),
                    s,
                    shape.elementType().value(),
                    longs(a, shape.dims()),
                    (long) shape.rank()));
  }

  // ---------------------------------------------------------------------------------------
  // Host communication, tokens and extension.

  /** Reads the next array queued by {@link Client#transferToInfeed}; config may be null. */
  public Op infeed(Shape shape, String config) {
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_infeed.invokeExact(
                    b,
                    shape.elementType().value(),
                    longs(a, shape.dims()),
                    (long) shape.rank(),
                    Native.cString(a, config)));
  }

  /** Sends {@code operand} to the host; config may be null. */
  public Op outfeed(Op operand, String config) {
    long x = id(operand);
    return op((b, a) -> (long) Native.kiln_op_outfeed.invokeExact(b, x, Native.cString(a, config)));
  }

  /**
   * Calls the registered target {@code target} (see {@link Kiln#registerCustomCall}); opaque
   * may be null.
   */
  public Op customCall(
      String target, List<Op> operands, Shape shape, String opaque, boolean hasSideEffect) {
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_custom_call.invokeExact(
                    b,
                    a.allocateFrom(target),
                    ids(a, operands),
                    (long) operands.size(),
                    shape.elementType().value(),
                    longs(a, shape.dims()),
                    (long) shape.rank(),
                    Native.cString(a, opaque),
                    flag(hasSideEffect)));
  }

  /**
   * Calls user-defined op {@code name} (see {@link UserOps}) with {@code attrs}, the attribute
   * dictionary text ({@code "{preserve_index = 2}"}; null for none).
   */
  public Op callRegistered(String name, List<Op> operands, String attrs) {
    return op(
        (b, a) ->
            (long)
                Native.kiln_op_call_registered.invokeExact(
                    b,
                    a.allocateFrom(name),
                    ids(a, operands),
                    (long) operands.size(),
                    Native.cString(a, attrs)));
  }

  /** A token that joins {@code tokens}. */
  public Op afterAll(Op... tokens) {
    List<Op> list = List.of(tokens);
    return op(
        (b, a) -> (long) Native.kiln_op_after_all.invokeExact(b, ids(a, list), (long) list.size()));
  }

  /** A fresh token. */
  public Op createToken() {
    return op((b, a) -> (long) Native.kiln_op_create_token.invokeExact(b));
  }
}
