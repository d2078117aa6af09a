package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** (a) A two-layer MLP built op by op, checked against a hand computation. */
class MlpBuilderTest {
  static final float[] X = {1f, -2f, 0.5f, 3f, 0f, -1f}; // [2,3]
  static final float[] W1 = { // [3,4]
    0.1f, -0.2f, 0.3f, 0.4f, 0.5f, 0.6f, -0.7f, 0.8f, -0.9f, 1.0f, 1.1f, -1.2f
  };
  static final float[] B1 = {0.01f, -0.02f, 0.03f, -0.5f}; // [4]
  static final float[] W2 = {1f, -1f, 0.5f, 0.25f, -0.5f, 2f, 0.75f, -0.125f}; // [4,2]
  static final float[] B2 = {0.1f, -0.1f}; // [2]

  /** relu(x . w1 + b1) . w2 + b2, computed in plain Java. */
  static float[] expected(float[] x) {
    float[] h = new float[2 * 4];
    for (int i = 0; i < 2; i++) {
      for (int j = 0; j < 4; j++) {
        float s = B1[j];
        for (int k = 0; k < 3; k++) {
          s += x[i * 3 + k] * W1[k * 4 + j];
        }
        h[i * 4 + j] = Math.max(s, 0f);
      }
    }
    float[] y = new float[2 * 2];
    for (int i = 0; i < 2; i++) {
      for (int j = 0; j < 2; j++) {
        float s = B2[j];
        for (int k = 0; k < 4; k++) {
          s += h[i * 4 + k] * W2[k * 2 + j];
        }
        y[i * 2 + j] = s;
      }
    }
    return y;
  }

  /** The MLP with the input as parameter 0 and the weights as parameters 1..4. */
  static Computation build() {
    try (Builder b = Builder.create("mlp")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32, 2, 3), "x");
      Op w1 = b.parameter(1, Shape.of(ElementType.F32, 3, 4), "w1");
      Op b1 = b.parameter(2, Shape.of(ElementType.F32, 4), "b1");
      Op w2 = b.parameter(3, Shape.of(ElementType.F32, 4, 2), "w2");
      Op b2 = b.parameter(4, Shape.of(ElementType.F32, 2), "b2");
      Op hidden = b.max(b.add(b.dot(x, w1), b1, 1), b.constant(0f));
      Op out = b.add(b.dot(hidden, w2), b2, 1);
      assertEquals(Shape.of(ElementType.F32, 2, 4), hidden.shape());
      assertEquals(Shape.of(ElementType.F32, 2, 2), out.shape());
      return b.build(out);
    }
  }

  @Test
  void mlpMatchesHandComputation() {
    float[] want = expected(X);
    try (Client client = Client.create();
        Computation mlp = build();
        Executable exe = client.compile(mlp)) {
      assertEquals(5, exe.parameterCount());
      assertEquals(1, exe.resultCount());
      assertEquals(ElementType.F32, exe.parameterType(0));
      List<Buffer> args =
          List.of(
              client.buffer(X, 2, 3),
              client.buffer(W1, 3, 4),
              client.buffer(B1, 4),
              client.buffer(W2, 4, 2),
              client.buffer(B2, 2));
      List<Buffer> results = exe.execute(args.toArray(Buffer[]::new));
      assertEquals(1, results.size());
      try (Buffer y = results.get(0)) {
        assertEquals(Shape.of(ElementType.F32, 2, 2), y.shape());
        TestSupport.assertClose(want, y.toFloatArray(), 1e-5, 1e-5);
      }
      args.forEach(Buffer::close);
    }
  }

  @Test
  void reluClipsNegativeHiddenUnits() {
    // Hand check of one hidden unit that relu zeroes: row 0, unit 3.
    float s = B1[3] + X[0] * W1[3] + X[1] * W1[7] + X[2] * W1[11];
    assertTrue(s < 0, "test data must exercise relu");
  }

  @Test
  void builderComputationRoundTripsThroughHloText() {
    try (Computation mlp = build()) {
      String text = mlp.toHloText();
      assertTrue(text.contains("dot"), text);
      try (Computation again = Computation.fromHloText(text)) {
        assertEquals(5, again.parameterCount());
      }
    }
  }

  @Test
  void buffersRoundTripEachArrayType() {
    try (Client client = Client.create()) {
      try (Buffer f = client.buffer(new float[] {1.5f, -2f}, 2)) {
        assertArrayEquals(new float[] {1.5f, -2f}, f.toFloatArray());
        assertArrayEquals(new long[] {2}, f.dimensions());
        assertEquals(8, f.byteSize());
      }
      try (Buffer d = client.buffer(new double[] {1.25, 2, 3, 4}, 2, 2)) {
        assertArrayEquals(new double[] {1.25, 2, 3, 4}, d.toDoubleArray());
        assertArrayEquals(new long[] {1, 0}, d.minorToMajor());
      }
      try (Buffer i = client.buffer(new int[] {7, -8, 9}, 3)) {
        assertArrayEquals(new int[] {7, -8, 9}, i.toIntArray());
      }
      try (Buffer l = client.buffer(new long[] {1L << 40}, 1)) {
        assertArrayEquals(new long[] {1L << 40}, l.toLongArray());
      }
      try (Buffer p = client.buffer(new boolean[] {true, false}, 2)) {
        assertArrayEquals(new boolean[] {true, false}, p.toBooleanArray());
      }
      try (Buffer scalar = client.buffer(new float[] {42f})) {
        assertEquals(0, scalar.dimensions().length);
      }
    }
  }
}
