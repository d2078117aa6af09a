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

/** The seed's ZeroOut, defined from Java, in its four versions; errors. */
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
}
