package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Forward mode: jvp, checked against derivatives worked out by hand, and its refusals. */
class JvpTest {
  static final float[] W = {1f, -2f, 0.5f};
  static final float[] X = {3f, 0.25f, -4f};
  static final float[] DW = {0.5f, 1f, -1.5f};
  static final float[] DX = {2f, -1f, 0.125f};

  /** f(w: f32[3], x: f32[3], n: s32[]) = (sin(w) * x, n). */
  static Computation sineTimes() {
    try (Builder b = Builder.create("sine_times")) {
      Op w = b.parameter(0, Shape.of(ElementType.F32, 3), "w");
      Op x = b.parameter(1, Shape.of(ElementType.F32, 3), "x");
      Op n = b.parameter(2, Shape.of(ElementType.S32), "n");
      return b.build(b.tuple(b.mul(b.sin(w), x), n));
    }
  }

  /** wrt (1, 0): x's tangent comes first, then w's; the results are (f, n, df, dn). */
  @Test
  void jvpReturnsResultsThenTheirTangents() {
    float[] y = new float[3];
    float[] dy = new float[3];
    for (int i = 0; i < 3; i++) {
      y[i] = (float) Math.sin(W[i]) * X[i];
      dy[i] = (float) (Math.cos(W[i]) * DW[i] * X[i] + Math.sin(W[i]) * DX[i]);
    }
    try (Client client = Client.create();
        Computation f = sineTimes();
        Computation jvp = f.jvp(1, 0);
        Executable exe = client.compile(jvp)) {
      assertEquals(5, jvp.parameterCount());
      List<Buffer> args =
          List.of(
              client.buffer(W, 3),
              client.buffer(X, 3),
              client.buffer(new int[] {7}),
              client.buffer(DX, 3),
              client.buffer(DW, 3));
      List<Buffer> results = exe.execute(args.toArray(Buffer[]::new));
      assertEquals(4, results.size());
      TestSupport.assertClose(y, results.get(0).toFloatArray(), 1e-5, 1e-5);
      assertArrayEquals(new int[] {7}, results.get(1).toIntArray());
      TestSupport.assertClose(dy, results.get(2).toFloatArray(), 1e-5, 1e-5);
      assertArrayEquals(new int[] {0}, results.get(3).toIntArray(), "an integer has no tangent");
      results.forEach(Buffer::close);
      args.forEach(Buffer::close);
    }
  }

  @Test
  void jvpRefusalsNameWhatIsWrong() {
    try (Computation f = sineTimes()) {
      Object[][] cases = {
        {new long[] {3}, "parameter 3"},
        {new long[] {0, 0}, "repeats parameter 0"},
        {new long[] {2}, "s32"},
        {new long[] {}, "wrt is empty"}
      };
      for (Object[] c : cases) {
        KilnException e = assertThrows(KilnException.class, () -> f.jvp((long[]) c[0]).close());
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains((String) c[1]), e.getMessage());
        assertTrue(e.getMessage().contains("kiln_computation_jvp"), e.getMessage());
      }
    }
  }
}
