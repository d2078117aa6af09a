import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.kiln.Buffer;
import dev.kiln.Builder;
import dev.kiln.Client;
import dev.kiln.Computation;
import dev.kiln.ElementType;
import dev.kiln.Executable;
import dev.kiln.KilnException;
import dev.kiln.Op;
import dev.kiln.Shape;
import dev.kiln.StatusCode;
import dev.kiln.UserOps;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The seed's ZeroOut op ("Adding an op") defined from Java and run: the int32 version,
 * preserve_index with its default and bounds check, the polymorphic T: {float, int32} version
 * and the list version, and the gradient of a loss through ZeroOutPoly (the op's gradient
 * function). Java kernels run on the cpu and interpreter backends.
 */
public final class ZeroOut {
  private ZeroOut() {}

  static void zeroOut(UserOps.KernelFrame f) {
    Object index = f.attrs().get("preserve_index");
    int keep = index == null ? 0 : ((Long) index).intValue();
    for (int r = 0; r < f.results().size(); r++) {
      UserOps.Tensor x = f.args().get(r);
      UserOps.Tensor out = f.results().get(r);
      if (x.dims().length != 1) {
        throw new KilnException(StatusCode.INVALID_ARGUMENT, "ZeroOut expects a 1-D vector.");
      }
      if (keep >= x.dims()[0]) {
        throw new KilnException(StatusCode.INVALID_ARGUMENT, "preserve_index out of range: " + keep);
      }
      out.data().fill((byte) 0);
      if (x.type() == ElementType.F32) {
        out.data().setAtIndex(JAVA_FLOAT, keep, x.data().getAtIndex(JAVA_FLOAT, keep));
      } else {
        out.data().setAtIndex(JAVA_INT, keep, x.data().getAtIndex(JAVA_INT, keep));
      }
    }
  }

  /** The seed's _zero_out_grad: each output's cotangent at the preserved index, zero elsewhere. */
  static List<Op> zeroOutGrad(UserOps.GradFrame f) {
    Builder b = f.builder();
    long keep = (Long) f.attrs().getOrDefault("preserve_index", 0L);
    List<Op> grads = new ArrayList<>();
    for (int i = 0; i < f.operands().size(); i++) {
      Shape shape = f.operands().get(i).shape();
      long[] dims = shape.dimensions();
      Op atKeep = b.eq(b.iota(Shape.of(ElementType.S64, dims), 0), b.constant(keep));
      Op zeros = b.broadcast(b.convert(b.constant(0), shape.elementType()), dims);
      grads.add(b.select(atKeep, f.outputGrads().get(i), zeros));
    }
    return grads;
  }

  /** d/dx dot(ZeroOutPoly(x), w): w at the preserved index 0, zero elsewhere. */
  static float[] gradient(Client client, float[] x, float[] w) {
    try (Builder b = Builder.create("loss")) {
      Op p = b.parameter(0, Shape.of(ElementType.F32, x.length), "x");
      Op wp = b.parameter(1, Shape.of(ElementType.F32, w.length), "w");
      try (Computation loss = b.build(b.dot(b.callRegistered("ZeroOutPoly", List.of(p), null), wp));
          Computation grad = loss.valueAndGrad(0);
          Executable exe = client.compile(grad);
          Buffer xb = client.buffer(x, x.length);
          Buffer wb = client.buffer(w, w.length)) {
        List<Buffer> results = exe.execute(xb, wb);
        float[] dx = results.get(1).toFloatArray();
        results.forEach(Buffer::close);
        return dx;
      }
    }
  }

  static void register() {
    UserOps.register(
        new UserOps.OpDef("ZeroOut", List.of(), List.of("to_zero: int32"), List.of("zeroed: int32"), null));
    UserOps.registerKernel("ZeroOut", "host", ElementType.S32, ZeroOut::zeroOut);
    UserOps.register(
        new UserOps.OpDef(
            "ZeroOutIndex",
            List.of("preserve_index: int >= 0 = 0"),
            List.of("to_zero: int32"),
            List.of("zeroed: int32"),
            null));
    UserOps.registerKernel("ZeroOutIndex", "host", ElementType.S32, ZeroOut::zeroOut);
    UserOps.register(
        new UserOps.OpDef(
            "ZeroOutPoly",
            List.of("T: {float, int32}"),
            List.of("to_zero: T"),
            List.of("zeroed: T"),
            null,
            ZeroOut::zeroOutGrad));
    UserOps.registerKernel("ZeroOutPoly", "host", ElementType.S32, ZeroOut::zeroOut);
    UserOps.registerKernel("ZeroOutPoly", "host", ElementType.F32, ZeroOut::zeroOut);
    UserOps.register(
        new UserOps.OpDef(
            "ZeroOutList",
            List.of("N: int >= 1", "T: {float, int32}"),
            List.of("to_zero: N * T"),
            List.of("zeroed: N * T"),
            null));
    UserOps.registerKernel("ZeroOutList", "host", null, ZeroOut::zeroOut);
  }

  static void run(Client client, String op, int n, String attrs) {
    try (Builder b = Builder.create(op)) {
      List<Op> params = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        params.add(b.parameter(i, Shape.of(ElementType.S32, 5), "x"));
      }
      try (Computation c = b.build(b.callRegistered(op, params, attrs));
          Executable exe = client.compile(c);
          Buffer x = client.buffer(new int[] {5, 4, 3, 2, 1}, 5)) {
        Buffer[] args = new Buffer[n];
        Arrays.fill(args, x);
        for (Buffer result : exe.execute(args)) {
          System.out.println(op + " " + (attrs == null ? "" : attrs) + ": " + Arrays.toString(result.toIntArray()));
          result.close();
        }
      }
    }
  }

  public static void main(String[] args) {
    register();
    try (Client client = Client.create(args.length > 0 ? args[0] : "cpu")) {
      run(client, "ZeroOut", 1, null);
      run(client, "ZeroOutIndex", 1, null);
      run(client, "ZeroOutIndex", 1, "{preserve_index = 3}");
      run(client, "ZeroOutPoly", 1, null);
      run(client, "ZeroOutList", 2, null);
      float[] dx =
          gradient(client, new float[] {1.5f, 2.5f, 3.5f, 4.5f, 5.5f}, new float[] {2, 3, 4, 5, 6});
      System.out.println("d/dx dot(ZeroOutPoly(x), w): " + Arrays.toString(dx));
      if (!Arrays.equals(dx, new float[] {2, 0, 0, 0, 0})) {
        throw new IllegalStateException(
            "ZeroOutPoly's gradient is " + Arrays.toString(dx) + ", not w at index 0 and zero elsewhere");
      }
      try {
        run(client, "ZeroOutIndex", 1, "{preserve_index = 7}");
        throw new IllegalStateException("preserve_index = 7 was not refused");
      } catch (KilnException e) {
        System.out.println("expected error: " + e.code() + ": " + e.getMessage());
      }
    }
  }
}
