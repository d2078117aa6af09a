package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * User-defined ops: an op defined from Java with TensorFlow-style specs (the seed's "Adding an
 * op"), Java kernels (FFM upcalls) that the cpu and interpreter backends run, {@link
 * Builder#callRegistered} to call it, an optional {@link ShapeFunction} that sets the result
 * dims of each call, and an optional {@link Gradient} that makes it differentiable ({@link
 * Computation#valueAndGrad}). Ops and kernels live until the process
 * exits; a taken name is ALREADY_EXISTS. Thread-safe.
 */
@SuppressWarnings("restricted") // upcall stubs; reads the call frame at the address the library gives
public final class UserOps {
  private UserOps() {}

  /**
   * An op definition. Attribute specs like {@code "preserve_index: int >= 0 = 0"}, {@code "T:
   * {float, int32}"}, {@code "N: int >= 1"}; inputs and outputs like {@code "to_zero: int32"},
   * {@code "to_zero: T"}, {@code "in: N * T"}.
   */
  public record OpDef(
      String name,
      List<String> attrs,
      List<String> inputs,
      List<String> outputs,
      String doc,
      Gradient gradient,
      ShapeFunction shapeFunction) {
    /** A definition without a gradient or shape function. */
    public OpDef(
        String name, List<String> attrs, List<String> inputs, List<String> outputs, String doc) {
      this(name, attrs, inputs, outputs, doc, null, null);
    }

    /** A definition with a gradient (may be null) and no shape function. */
    public OpDef(
        String name,
        List<String> attrs,
        List<String> inputs,
        List<String> outputs,
        String doc,
        Gradient gradient) {
      this(name, attrs, inputs, outputs, doc, gradient, null);
    }

    /** This definition with shape function {@code f}. */
    public OpDef withShapeFunction(ShapeFunction f) {
      return new OpDef(name, attrs, inputs, outputs, doc, gradient, f);
    }
  }

  /**
   * A shape function: may change the result dims of a call with {@link
   * ShapeFrame#setResultDims}, or refuse the call by throwing: a {@link KilnException} keeps its
   * code, others are UNKNOWN; either fails the build, naming the op.
   */
  @FunctionalInterface
  public interface ShapeFunction {
    /** Sets the result dims of the call {@code frame} describes. */
    void compute(ShapeFrame frame) throws Exception;
  }

  /** An argument's or result's element type and dims. */
  public record TensorShape(ElementType type, long[] dims) {}

  /**
   * What a shape function gets: the arguments' shapes, the results' shapes so far (types from the
   * definition; dims those of the argument at the same position, else of argument 0, else a
   * scalar) and the call's attributes (as a kernel sees them). Valid during the call only.
   */
  public static final class ShapeFrame {
    private final MemorySegment frame;
    private final Map<String, Object> attrs;

    private ShapeFrame(MemorySegment frame, Map<String, Object> attrs) {
      this.frame = frame;
      this.attrs = attrs;
    }

    /** The op's name. */
    public String opName() {
      return Native.string(frame.get(ADDRESS, 8));
    }

    /** The arguments' shapes. */
    public List<TensorShape> args() {
      return shapes(tensors(frame.get(ADDRESS, 56), frame.get(JAVA_LONG, 48)));
    }

    /** The results' shapes, with the dims set so far. */
    public List<TensorShape> results() {
      return shapes(tensors(frame.get(ADDRESS, 72), frame.get(JAVA_LONG, 64)));
    }

    /** The call's attributes. */
    public Map<String, Object> attrs() {
      return attrs;
    }

    /**
     * Sets result {@code index}'s dims; an index past the results is OUT_OF_RANGE, a negative size
     * INVALID_ARGUMENT.
     */
    public void setResultDims(int index, long... dims) {
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment d = dims.length == 0 ? MemorySegment.NULL : arena.allocateFrom(JAVA_LONG, dims);
        Native.check(
            (MemorySegment)
                Native.kiln_user_op_frame_set_result_dims.invokeExact(
                    frame, (long) index, d, (long) dims.length));
      } catch (KilnException e) {
        throw e;
      } catch (Throwable t) {
        throw Native.unexpected(t);
      }
    }

    private static List<TensorShape> shapes(List<Tensor> tensors) {
      List<TensorShape> out = new ArrayList<>();
      for (Tensor t : tensors) {
        out.add(new TensorShape(t.type(), t.dims()));
      }
      return List.copyOf(out);
    }
  }

  /**
   * A gradient (after TensorFlow's RegisterGradient): builds the cotangent of each operand, of
   * its operand's shape, with {@code frame.builder()}; a shorter list or a null entry means no
   * gradient (zero). A {@link KilnException} it throws keeps its code; others are UNKNOWN; either
   * reaches the caller of the differentiation, naming the op.
   */
  @FunctionalInterface
  public interface Gradient {
    /** The operands' cotangents. */
    List<Op> compute(GradFrame frame) throws Exception;
  }

  /**
   * What a gradient gets: the builder of the gradient computation (the library's, valid during
   * the call only), the op's operands, outputs (one per output array) and their cotangents as
   * ops of that builder, and the call's attributes (as a kernel sees them).
   */
  public record GradFrame(
      Builder builder,
      List<Op> operands,
      List<Op> outputs,
      List<Op> outputGrads,
      Map<String, Object> attrs) {}

  /** A Java kernel. A {@link KilnException} it throws keeps its code; others are UNKNOWN. */
  @FunctionalInterface
  public interface Kernel {
    /** Fills every result of {@code frame} from its arguments and attributes. */
    void compute(KernelFrame frame) throws Exception;
  }

  /** An argument or result: element type, dims and its row-major data. */
  public record Tensor(ElementType type, long[] dims, MemorySegment data) {}

  /**
   * What a kernel gets: arguments, results (to fill, every element) and attributes (Long, Double,
   * Boolean, String, ElementType, long[] for a shape, MemorySegment copy for a tensor, List for a
   * list). Valid during the call only.
   */
  public record KernelFrame(
      String opName, List<Tensor> args, List<Tensor> results, Map<String, Object> attrs) {}

  /** Registers {@code def} process-wide. */
  public static void register(OpDef def) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment) Native.kiln_user_op_def_create.invokeExact(arena.allocateFrom(def.name()), out));
      MemorySegment d = out.get(ADDRESS, 0);
      try {
        for (String spec : def.attrs()) {
          Native.check(
              (MemorySegment) Native.kiln_user_op_def_add_attr.invokeExact(d, arena.allocateFrom(spec)));
        }
        for (String spec : def.inputs()) {
          Native.check(
              (MemorySegment) Native.kiln_user_op_def_add_input.invokeExact(d, arena.allocateFrom(spec)));
        }
        for (String spec : def.outputs()) {
          Native.check(
              (MemorySegment) Native.kiln_user_op_def_add_output.invokeExact(d, arena.allocateFrom(spec)));
        }
        Native.check(
            (MemorySegment) Native.kiln_user_op_def_set_doc.invokeExact(d, Native.cString(arena, def.doc())));
        if (def.gradient() != null) {
          MemorySegment stub =
              Linker.nativeLinker()
                  .upcallStub(INVOKE_GRADIENT.bindTo(def.gradient()), GRADIENT, Arena.global());
          Native.check((MemorySegment) Native.kiln_user_op_def_set_grad_fn.invokeExact(d, stub));
        }
        if (def.shapeFunction() != null) {
          MemorySegment stub =
              Linker.nativeLinker()
                  .upcallStub(
                      INVOKE_SHAPE.bindTo(def.shapeFunction()),
                      FunctionDescriptor.of(ADDRESS, ADDRESS),
                      Arena.global());
          Native.check((MemorySegment) Native.kiln_user_op_def_set_shape_fn.invokeExact(d, stub));
        }
        Native.check((MemorySegment) Native.kiln_user_op_register.invokeExact(d));
      } finally {
        Native.kiln_user_op_def_destroy.invokeExact(d);
      }
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  private static final MethodHandle INVOKE_KERNEL;
  private static final MethodHandle INVOKE_GRADIENT;
  private static final MethodHandle INVOKE_SHAPE;
  // kiln_op_grad_fn: (builder, operands, n, outputs, output_grads, m, attrs, k, grads, data).
  private static final FunctionDescriptor GRADIENT =
      FunctionDescriptor.of(
          ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG,
          ADDRESS, ADDRESS);

  static {
    try {
      INVOKE_KERNEL =
          MethodHandles.lookup()
              .findStatic(
                  UserOps.class,
                  "invoke",
                  MethodType.methodType(MemorySegment.class, Kernel.class, MemorySegment.class));
      INVOKE_GRADIENT =
          MethodHandles.lookup()
              .findStatic(
                  UserOps.class,
                  "gradient",
                  GRADIENT.toMethodType().insertParameterTypes(0, Gradient.class));
      INVOKE_SHAPE =
          MethodHandles.lookup()
              .findStatic(
                  UserOps.class,
                  "shape",
                  MethodType.methodType(
                      MemorySegment.class, ShapeFunction.class, MemorySegment.class));
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * Registers {@code kernel} of {@code op} for {@code backend} ("cpu", "interpreter", or "host"
   * for both) and {@code type} (null: any element type).
   */
  public static void registerKernel(String op, String backend, ElementType type, Kernel kernel) {
    MemorySegment stub =
        Linker.nativeLinker()
            .upcallStub(
                INVOKE_KERNEL.bindTo(kernel), FunctionDescriptor.of(ADDRESS, ADDRESS), Arena.global());
    try (Arena arena = Arena.ofConfined()) {
      Native.check(
          (MemorySegment)
              Native.kiln_user_op_register_kernel.invokeExact(
                  arena.allocateFrom(op),
                  arena.allocateFrom(backend),
                  type == null ? 0 : type.value(),
                  stub,
                  MemorySegment.NULL,
                  MemorySegment.NULL));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * Registers a device kernel of {@code op} for {@code backend} and {@code type} (null: any
   * element type): a SPIR-V module for "vulkan", PTX text for "cuda", with entry point {@code
   * entry}, launched with the frame kiln.h documents for kiln_user_op_register_device_kernel (a
   * buffer per argument then per result, each buffer's element count, then the op's int and bool
   * attributes). {@code blockSize} and {@code gridSize} set the launch; 0 keeps the default (64
   * invocations a workgroup on vulkan, 256 threads a block on cuda; a grid covering result 0).
   * Code that is not SPIR-V or PTX is INVALID_ARGUMENT, an entry point it lacks NOT_FOUND, a taken
   * (backend, type) ALREADY_EXISTS.
   */
  public static void registerDeviceKernel(
      String op, String backend, ElementType type, byte[] code, String entry, int blockSize, int gridSize) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment c = arena.allocate(Math.max(code.length, 1));
      c.copyFrom(MemorySegment.ofArray(code));
      Native.check(
          (MemorySegment)
              Native.kiln_user_op_register_device_kernel_with_launch.invokeExact(
                  arena.allocateFrom(op),
                  arena.allocateFrom(backend),
                  type == null ? 0 : type.value(),
                  c,
                  (long) code.length,
                  arena.allocateFrom(entry),
                  blockSize,
                  gridSize));
    } catch (KilnException e) {
      throw e;
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** A description of every registered op, as {@code kiln info --ops} prints it. */
  public static String describe() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_user_op_registry_describe.invokeExact(out));
      MemorySegment text = out.get(ADDRESS, 0);
      String s = Native.string(text);
      Native.kiln_string_destroy.invokeExact(text);
      return s;
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  // kiln_op_call_frame_t, kiln_op_buffer_t and kiln_op_attr_t on LP64.
  private static final long FRAME_SIZE = 96;
  private static final long BUFFER_SIZE = 48;
  private static final long ATTR_SIZE = 120;

  private static MemorySegment invoke(Kernel kernel, MemorySegment framePointer) {
    try {
      MemorySegment f = framePointer.reinterpret(FRAME_SIZE);
      String name = Native.string(f.get(ADDRESS, 8));
      List<Tensor> args = tensors(f.get(ADDRESS, 56), f.get(JAVA_LONG, 48));
      List<Tensor> results = tensors(f.get(ADDRESS, 72), f.get(JAVA_LONG, 64));
      Map<String, Object> attrs = new LinkedHashMap<>();
      MemorySegment a = f.get(ADDRESS, 88).reinterpret(ATTR_SIZE * f.get(JAVA_LONG, 80));
      for (long i = 0; i < f.get(JAVA_LONG, 80); i++) {
        MemorySegment attr = a.asSlice(i * ATTR_SIZE, ATTR_SIZE);
        attrs.put(Native.string(attr.get(ADDRESS, 8)), value(attr));
      }
      kernel.compute(new KernelFrame(name, args, results, attrs));
      return MemorySegment.NULL;
    } catch (KilnException e) {
      return status(e.code().value(), e.getMessage());
    } catch (Throwable t) {
      return status(StatusCode.UNKNOWN.value(), t.getClass().getSimpleName() + ": " + t.getMessage());
    }
  }

  private static MemorySegment shape(ShapeFunction function, MemorySegment framePointer) {
    try {
      MemorySegment f = framePointer.reinterpret(FRAME_SIZE);
      Map<String, Object> attrs = new LinkedHashMap<>();
      MemorySegment a = f.get(ADDRESS, 88).reinterpret(ATTR_SIZE * f.get(JAVA_LONG, 80));
      for (long i = 0; i < f.get(JAVA_LONG, 80); i++) {
        MemorySegment attr = a.asSlice(i * ATTR_SIZE, ATTR_SIZE);
        attrs.put(Native.string(attr.get(ADDRESS, 8)), value(attr));
      }
      function.compute(new ShapeFrame(f, attrs));
      return MemorySegment.NULL;
    } catch (KilnException e) {
      return status(e.code().value(), e.getMessage());
    } catch (Throwable t) {
      return status(StatusCode.UNKNOWN.value(), t.getClass().getSimpleName() + ": " + t.getMessage());
    }
  }

  private static List<Op> ops(Builder b, MemorySegment pointer, long count) {
    List<Op> out = new ArrayList<>();
    MemorySegment all = pointer.reinterpret(8 * count);
    for (long i = 0; i < count; i++) {
      out.add(new Op(b, all.getAtIndex(JAVA_LONG, i)));
    }
    return List.copyOf(out);
  }

  private static MemorySegment gradient(
      Gradient gradient,
      MemorySegment builder,
      MemorySegment operands,
      long numOperands,
      MemorySegment outputs,
      MemorySegment outputGrads,
      long numOutputs,
      MemorySegment attrPointer,
      long numAttrs,
      MemorySegment operandGrads,
      MemorySegment userData) {
    Builder b = Builder.borrowed(builder);
    try {
      Map<String, Object> attrs = new LinkedHashMap<>();
      MemorySegment a = attrPointer.reinterpret(ATTR_SIZE * numAttrs);
      for (long i = 0; i < numAttrs; i++) {
        MemorySegment attr = a.asSlice(i * ATTR_SIZE, ATTR_SIZE);
        attrs.put(Native.string(attr.get(ADDRESS, 8)), value(attr));
      }
      GradFrame frame =
          new GradFrame(
              b,
              ops(b, operands, numOperands),
              ops(b, outputs, numOutputs),
              ops(b, outputGrads, numOutputs),
              attrs);
      List<Op> grads = gradient.compute(frame);
      if (grads == null) {
        return MemorySegment.NULL;
      }
      if (grads.size() > numOperands) {
        return status(
            StatusCode.INVALID_ARGUMENT.value(),
            "the gradient function returned " + grads.size() + " cotangents for " + numOperands
                + " operand(s)");
      }
      MemorySegment out = operandGrads.reinterpret(8 * numOperands);
      for (int i = 0; i < grads.size(); i++) {
        if (grads.get(i) != null) {
          out.setAtIndex(JAVA_LONG, i, grads.get(i).id());
        }
      }
      return MemorySegment.NULL;
    } catch (KilnException e) {
      return status(e.code().value(), e.getMessage());
    } catch (Throwable t) {
      String what = t.getClass().getSimpleName() + ": " + t.getMessage();
      return status(StatusCode.UNKNOWN.value(), what);
    } finally {
      b.close(); // invalidates the view; the library owns the builder
    }
  }

  private static MemorySegment status(int code, String message) {
    try (Arena arena = Arena.ofConfined()) {
      return (MemorySegment)
          Native.kiln_status_create.invokeExact(code, arena.allocateFrom(String.valueOf(message)));
    } catch (Throwable t) {
      return MemorySegment.NULL; // cannot report: the library sees success
    }
  }

  private static long[] dims(MemorySegment pointer, long rank) {
    return rank == 0 ? new long[0] : pointer.reinterpret(8 * rank).toArray(JAVA_LONG);
  }

  private static List<Tensor> tensors(MemorySegment pointer, long count) {
    List<Tensor> out = new ArrayList<>();
    MemorySegment all = pointer.reinterpret(BUFFER_SIZE * count);
    for (long i = 0; i < count; i++) {
      MemorySegment b = all.asSlice(i * BUFFER_SIZE, BUFFER_SIZE);
      long bytes = b.get(JAVA_LONG, 40);
      out.add(
          new Tensor(
              ElementType.of(b.get(JAVA_INT, 8)),
              dims(b.get(ADDRESS, 16), b.get(JAVA_LONG, 24)),
              b.get(ADDRESS, 32).reinterpret(bytes)));
    }
    return List.copyOf(out);
  }

  private static Object value(MemorySegment attr) {
    int kind = attr.get(JAVA_INT, 16);
    switch (kind) {
      case 1:
        return attr.get(JAVA_LONG, 24);
      case 2:
        return attr.get(JAVA_DOUBLE, 32);
      case 3:
        return attr.get(JAVA_LONG, 24) != 0;
      case 4:
        {
          long n = attr.get(JAVA_LONG, 48);
          byte[] bytes = attr.get(ADDRESS, 40).reinterpret(n).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
          return new String(bytes, StandardCharsets.UTF_8);
        }
      case 5:
        return ElementType.of(attr.get(JAVA_INT, 56));
      case 6:
        return dims(attr.get(ADDRESS, 64), attr.get(JAVA_LONG, 72));
      case 7:
        {
          long n = attr.get(JAVA_LONG, 88);
          return Arena.ofAuto().allocate(Math.max(n, 1)).copyFrom(attr.get(ADDRESS, 80).reinterpret(n));
        }
      default:
        {
          long n = attr.get(JAVA_LONG, 104);
          MemorySegment items = attr.get(ADDRESS, 112).reinterpret(ATTR_SIZE * n);
          List<Object> list = new ArrayList<>();
          for (long i = 0; i < n; i++) {
            list.add(value(items.asSlice(i * ATTR_SIZE, ATTR_SIZE)));
          }
          return List.copyOf(list);
        }
    }
  }
}
