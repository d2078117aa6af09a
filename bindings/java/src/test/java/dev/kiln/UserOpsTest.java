package dev.kiln;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The seed's ZeroOut, defined from Java, in its four versions; errors; its gradient. */
class UserOpsTest {
  static void zeroOut(UserOps.KernelFrame f) {
    int keep = f.attrs().containsKey("preserve_index") ? ((Long) f.attrs().get("preserve_index")).intValue() : 0;
    for (int r = 0; r < f.results().size(); r++) {
      UserOps.Tensor x = f.args().get(r);
      UserOps.Tensor out = f.results().get(r);
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

  @BeforeAll
  static void register() {
    UserOps.register(
        new UserOps.OpDef("JZeroOut", List.of(), List.of("to_zero: int32"), List.of("zeroed: int32"), "ZeroOut"));
    UserOps.registerKernel("JZeroOut", "host", ElementType.S32, UserOpsTest::zeroOut);
    UserOps.register(
        new UserOps.OpDef(
            "JZeroOutIndex",
            List.of("preserve_index: int >= 0 = 0"),
            List.of("to_zero: int32"),
            List.of("zeroed: int32"),
            null));
    UserOps.registerKernel("JZeroOutIndex", "host", ElementType.S32, UserOpsTest::zeroOut);
    UserOps.register(
        new UserOps.OpDef(
            "JZeroOutPoly", List.of("T: {float, int32}"), List.of("to_zero: T"), List.of("zeroed: T"), null));
    UserOps.registerKernel("JZeroOutPoly", "host", ElementType.S32, UserOpsTest::zeroOut);
    UserOps.registerKernel("JZeroOutPoly", "host", ElementType.F32, UserOpsTest::zeroOut);
    UserOps.register(
        new UserOps.OpDef(
            "JZeroOutList",
            List.of("N: int >= 1", "T: {float, int32}"),
            List.of("to_zero: N * T"),
            List.of("zeroed: N * T"),
            null));
    UserOps.registerKernel("JZeroOutList", "host", null, UserOpsTest::zeroOut);
  }

  static int[][] run(String backend, String op, int n, String attrs) {
    try (Client client = Client.create(backend);
        Builder b = Builder.create(op)) {
      List<Op> params = new java.util.ArrayList<>();
      for (int i = 0; i < n; i++) {
        params.add(b.parameter(i, Shape.of(ElementType.S32, 5), "x"));
      }
      try (Computation c = b.build(b.callRegistered(op, params, attrs));
          Executable exe = client.compile(c);
          Buffer x = client.buffer(new int[] {5, 4, 3, 2, 1}, 5)) {
        Buffer[] args = new Buffer[n];
        java.util.Arrays.fill(args, x);
        List<Buffer> results = exe.execute(args);
        int[][] out = new int[results.size()][];
        for (int i = 0; i < out.length; i++) {
          out[i] = results.get(i).toIntArray();
          results.get(i).close();
        }
        return out;
      }
    }
  }

  @Test
  void zeroOutVersions() {
    for (String backend : List.of("cpu", "interpreter")) {
      assertArrayEquals(new int[][] {{5, 0, 0, 0, 0}}, run(backend, "JZeroOut", 1, null));
      assertArrayEquals(new int[][] {{5, 0, 0, 0, 0}}, run(backend, "JZeroOutIndex", 1, null));
      assertArrayEquals(
          new int[][] {{0, 0, 0, 2, 0}}, run(backend, "JZeroOutIndex", 1, "{preserve_index = 3}"));
      assertArrayEquals(new int[][] {{5, 0, 0, 0, 0}}, run(backend, "JZeroOutPoly", 1, null));
      assertArrayEquals(
          new int[][] {{5, 0, 0, 0, 0}, {5, 0, 0, 0, 0}}, run(backend, "JZeroOutList", 2, null));
    }
  }

  @Test
  void errors() {
    KilnException e =
        assertThrows(KilnException.class, () -> run("cpu", "JZeroOutIndex", 1, "{preserve_index = -1}"));
    assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("less than its minimum 0"), e.getMessage());
    e = assertThrows(KilnException.class, () -> run("cpu", "JZeroOutList", 0, null));
    assertTrue(e.getMessage().contains("fewer than its minimum 1"), e.getMessage());
    e = assertThrows(KilnException.class, () -> run("interpreter", "JZeroOutIndex", 1, "{preserve_index = 9}"));
    assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
    assertTrue(
        e.getMessage().contains("kernel failed on host: preserve_index out of range: 9"), e.getMessage());
    e =
        assertThrows(
            KilnException.class,
            () ->
                UserOps.register(
                    new UserOps.OpDef("JZeroOut", List.of(), List.of("x: int32"), List.of("y: int32"), null)));
    assertEquals(StatusCode.ALREADY_EXISTS, e.code());
    assertTrue(UserOps.describe().contains("JZeroOutIndex(to_zero: int32) -> (zeroed: int32)"));
  }

  /** The seed's _zero_out_grad: the output cotangent at the preserved index only. */
  static List<Op> zeroOutGrad(UserOps.GradFrame f) {
    Builder b = f.builder();
    long keep = (Long) f.attrs().getOrDefault("preserve_index", 0L);
    List<Op> grads = new java.util.ArrayList<>();
    for (int i = 0; i < f.operands().size(); i++) {
      Shape shape = f.operands().get(i).shape();
      long[] dims = shape.dimensions();
      Op atKeep = b.eq(b.iota(Shape.of(ElementType.S64, dims), 0), b.constant(keep));
      Op zeros = b.broadcast(b.convert(b.constant(0), shape.elementType()), dims);
      grads.add(b.select(atKeep, f.outputGrads().get(i), zeros));
    }
    return grads;
  }

  static void registerGradOps() {
    if (UserOps.describe().contains("JZeroOutGrad(")) {
      return;
    }
    UserOps.Gradient failing =
        f -> {
          throw new KilnException(StatusCode.FAILED_PRECONDITION, "no gradient on Thursdays");
        };
    java.util.Map<String, UserOps.Gradient> ops = new java.util.LinkedHashMap<>();
    ops.put("JZeroOutGrad", UserOpsTest::zeroOutGrad);
    ops.put("JZeroOutNoGrad", null);
    ops.put("JZeroOutBadGrad", failing);
    for (var op : ops.entrySet()) {
      UserOps.register(
          new UserOps.OpDef(
              op.getKey(),
              List.of("preserve_index: int >= 0 = 0"),
              List.of("to_zero: float"),
              List.of("zeroed: float"),
              null,
              op.getValue()));
      UserOps.registerKernel(op.getKey(), "host", ElementType.F32, UserOpsTest::zeroOut);
    }
  }

  /** d/dx of dot(op(x), w) at x = [1.5, ..., 5.5], w = [1, ..., 5]: loss, then gradient. */
  static float[][] gradOf(String backend, String op, String attrs) {
    registerGradOps();
    try (Client client = Client.create(backend);
        Builder b = Builder.create("loss")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32, 5), "x");
      Op w = b.constant(new float[] {1, 2, 3, 4, 5}, 5);
      try (Computation loss = b.build(b.dot(b.callRegistered(op, List.of(x), attrs), w));
          Computation gradient = loss.valueAndGrad(0);
          Executable exe = client.compile(gradient);
          Buffer xb = client.buffer(new float[] {1.5f, 2.5f, 3.5f, 4.5f, 5.5f}, 5)) {
        List<Buffer> results = exe.execute(xb);
        float[][] out = {results.get(0).toFloatArray(), results.get(1).toFloatArray()};
        results.forEach(Buffer::close);
        return out;
      }
    }
  }

  @Test
  void zeroOutGradient() {
    for (String backend : List.of("cpu", "interpreter")) {
      float[][] r = gradOf(backend, "JZeroOutGrad", null);
      assertArrayEquals(new float[] {1.5f}, r[0]);
      assertArrayEquals(new float[] {1, 0, 0, 0, 0}, r[1]);
      r = gradOf(backend, "JZeroOutGrad", "{preserve_index = 3}");
      assertArrayEquals(new float[] {18}, r[0]);
      assertArrayEquals(new float[] {0, 0, 0, 4, 0}, r[1]);
    }
    KilnException e =
        assertThrows(KilnException.class, () -> gradOf("cpu", "JZeroOutNoGrad", null));
    assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("op 'JZeroOutNoGrad'"), e.getMessage());
    assertTrue(e.getMessage().contains("has no gradient registered"), e.getMessage());
    e = assertThrows(KilnException.class, () -> gradOf("interpreter", "JZeroOutBadGrad", null));
    assertEquals(StatusCode.FAILED_PRECONDITION, e.code());
    assertTrue(e.getMessage().contains("op 'JZeroOutBadGrad'"), e.getMessage());
    assertTrue(e.getMessage().contains("no gradient on Thursdays"), e.getMessage());
  }

  /**
   * JTile(x: float, times) repeats a vector {@code times} times: its shape function makes the
   * result times as long, or refuses a rank other than 1.
   */
  @Test
  void shapeFunction() {
    UserOps.ShapeFunction tileShape =
        f -> {
          long[] dims = f.args().get(0).dims();
          if (dims.length != 1) {
            throw new KilnException(
                StatusCode.INVALID_ARGUMENT, "JTile takes a vector, got rank " + dims.length);
          }
          assertEquals(ElementType.F32, f.results().get(0).type());
          f.setResultDims(0, dims[0] * (Long) f.attrs().get("times"));
        };
    UserOps.register(
        new UserOps.OpDef("JTile", List.of("times: int >= 1"), List.of("x: float"), List.of("y: float"), null)
            .withShapeFunction(tileShape));
    UserOps.registerKernel(
        "JTile",
        "host",
        ElementType.F32,
        f -> {
          UserOps.Tensor x = f.args().get(0);
          UserOps.Tensor y = f.results().get(0);
          long n = x.dims()[0];
          for (long i = 0; i < y.dims()[0]; i++) {
            y.data().setAtIndex(JAVA_FLOAT, i, x.data().getAtIndex(JAVA_FLOAT, i % n));
          }
        });
    for (String backend : List.of("cpu", "interpreter")) {
      try (Client client = Client.create(backend);
          Builder b = Builder.create("tile")) {
        Op y = b.callRegistered("JTile", List.of(b.parameter(0, Shape.of(ElementType.F32, 2), "x")), "{times = 3}");
        assertArrayEquals(new long[] {6}, b.shape(y).dimensions());
        try (Computation c = b.build(y);
            Executable exe = client.compile(c);
            Buffer x = client.buffer(new float[] {1.5f, -2f}, 2)) {
          List<Buffer> out = exe.execute(new Buffer[] {x});
          assertArrayEquals(new float[] {1.5f, -2f, 1.5f, -2f, 1.5f, -2f}, out.get(0).toFloatArray(), backend);
          out.get(0).close();
        }
      }
    }
    try (Builder b = Builder.create("tile_matrix")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32, 2, 2), "x");
      KilnException e =
          assertThrows(KilnException.class, () -> b.callRegistered("JTile", List.of(x), "{times = 2}"));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      assertTrue(
          e.getMessage().contains("JTile") && e.getMessage().contains("JTile takes a vector, got rank 2"),
          e.getMessage());
    }
  }

  /** Device kernels (SPIR-V on vulkan, PTX on cuda) from Java: code and entry point checked. */
  @Test
  void deviceKernels() {
    byte[] ptx =
        ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry k(.param .u64 a)\n{\n\tret;\n}\n"
            .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    UserOps.register(
        new UserOps.OpDef("JDeviceZeroOut", List.of(), List.of("to_zero: int32"), List.of("zeroed: int32"), null));
    KilnException e =
        assertThrows(
            KilnException.class,
            () ->
                UserOps.registerDeviceKernel(
                    "JDeviceZeroOut", "vulkan", ElementType.S32, new byte[] {1, 2, 3, 4}, "main", 0, 0));
    assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("the vulkan kernel is not a SPIR-V module"), e.getMessage());
    e =
        assertThrows(
            KilnException.class,
            () -> UserOps.registerDeviceKernel("JDeviceZeroOut", "cuda", ElementType.S32, ptx, "main", 0, 0));
    assertEquals(StatusCode.NOT_FOUND, e.code());
    assertTrue(e.getMessage().contains("has no .entry kernel named 'main' (it has 'k')"), e.getMessage());
    UserOps.registerDeviceKernel("JDeviceZeroOut", "cuda", ElementType.S32, ptx, "k", 32, 0);
    e =
        assertThrows(
            KilnException.class,
            () -> UserOps.registerDeviceKernel("JDeviceZeroOut", "cuda", ElementType.S32, ptx, "k", 0, 0));
    assertEquals(StatusCode.ALREADY_EXISTS, e.code());
    assertTrue(UserOps.describe().contains("cuda:s32 (k)"));
  }
}
