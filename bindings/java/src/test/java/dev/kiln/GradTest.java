package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Gradients: grad and valueAndGrad, checked against derivatives worked out by hand. */
class GradTest {
  static final float[] W = {1f, -2f, 0.5f};
  static final float[] X = {3f, 0.25f, -4f};

  static Computation addF32() {
    try (Builder b = Builder.create("add")) {
      return b.build(
          b.add(
              b.parameter(0, Shape.of(ElementType.F32), "a"),
              b.parameter(1, Shape.of(ElementType.F32), "b")));
    }
  }

  /** loss(w: f32[3], x: f32[3], n: s32[]) = sum(w * w * x). */
  static Computation loss() {
    try (Computation add = addF32();
        Builder b = Builder.create("loss")) {
      Op w = b.parameter(0, Shape.of(ElementType.F32, 3), "w");
      Op x = b.parameter(1, Shape.of(ElementType.F32, 3), "x");
      b.parameter(2, Shape.of(ElementType.S32), "n");
      return b.build(b.reduce(b.mul(b.mul(w, w), x), b.constant(0f), add, 0));
    }
  }

  @Test
  void valueAndGradOfALoss() {
    try (Client client = Client.create();
        Computation loss = loss();
        Computation gradient = loss.valueAndGrad(1, 0);
        Executable exe = client.compile(gradient)) {
      assertEquals(3, gradient.parameterCount());
      List<Buffer> args =
          List.of(client.buffer(W, 3), client.buffer(X, 3), client.buffer(new int[] {7}));
      List<Buffer> results = exe.execute(args.toArray(Buffer[]::new));
      assertEquals(3, results.size());
      float[] dx = new float[3];
      float[] dw = new float[3];
      for (int i = 0; i < 3; i++) {
        dx[i] = W[i] * W[i];
        dw[i] = 2 * W[i] * X[i];
      }
      TestSupport.assertClose(new float[] {3f}, results.get(0).toFloatArray(), 1e-5, 1e-5);
      TestSupport.assertClose(dx, results.get(1).toFloatArray(), 1e-5, 1e-5);
      TestSupport.assertClose(dw, results.get(2).toFloatArray(), 1e-5, 1e-5);
      results.forEach(Buffer::close);
      args.forEach(Buffer::close);
    }
  }

  @Test
  void gradOfAVectorFunctionTakesACotangent() {
    float[] x = {0f, 1f, -0.5f};
    float[] cotangent = {1f, 2f, -3f};
    float[] y = new float[3];
    float[] dx = new float[3];
    for (int i = 0; i < 3; i++) {
      y[i] = (float) Math.sin(x[i]);
      dx[i] = cotangent[i] * (float) Math.cos(x[i]);
    }
    try (Client client = Client.create();
        Builder b = Builder.create("sin")) {
      try (Computation f = b.build(b.sin(b.parameter(0, Shape.of(ElementType.F32, 3), "x")));
          Computation vjp = f.grad(0);
          Executable exe = client.compile(vjp)) {
        assertEquals(2, vjp.parameterCount());
        List<Buffer> args = List.of(client.buffer(x, 3), client.buffer(cotangent, 3));
        List<Buffer> results = exe.execute(args.toArray(Buffer[]::new));
        TestSupport.assertClose(y, results.get(0).toFloatArray(), 1e-5, 1e-5);
        TestSupport.assertClose(dx, results.get(1).toFloatArray(), 1e-5, 1e-5);
        results.forEach(Buffer::close);
        args.forEach(Buffer::close);
      }
    }
  }

  @Test
  void refusalsNameWhatIsWrong() {
    try (Computation loss = loss()) {
      Object[][] cases = {
        {new long[] {3}, "parameter 3"},
        {new long[] {0, 1, 0}, "repeats parameter 0"},
        {new long[] {2}, "s32"},
        {new long[] {}, "wrt is empty"}
      };
      for (Object[] c : cases) {
        KilnException e =
            assertThrows(KilnException.class, () -> loss.valueAndGrad((long[]) c[0]).close());
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains((String) c[1]), e.getMessage());
        assertTrue(e.getMessage().contains("kiln_computation_value_and_grad"), e.getMessage());
      }
    }
    // A custom call with no gradient registered has no derivative.
    try (Builder b = Builder.create("opaque")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32), "x");
      Op call =
          b.customCall("kiln_test_no_gradient", List.of(x), Shape.of(ElementType.F32), null, false);
      try (Computation opaque = b.build(call)) {
        KilnException e = assertThrows(KilnException.class, () -> opaque.grad(0).close());
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("'custom-call' is not differentiable"), e.getMessage());
      }
    }
  }

  /** map is differentiated through its body: sum(map(add, x, x)) has gradient 2. */
  @Test
  void gradOfAMap() {
    try (Computation add = addF32();
        Builder b = Builder.create("mapped")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32, 4), "x");
      Op doubled = b.map(List.of(x, x), add, 0);
      try (Client client = Client.create();
          Computation mapped = b.build(b.reduce(doubled, b.constant(0f), add, 0));
          Computation gradient = mapped.valueAndGrad(0);
          Executable exe = client.compile(gradient)) {
        Buffer argument = client.buffer(new float[] {0.5f, -1f, 2f, 3f}, 4);
        List<Buffer> results = exe.execute(argument);
        assertEquals(2, results.size());
        TestSupport.assertClose(new float[] {9f}, results.get(0).toFloatArray(), 1e-5, 1e-5);
        TestSupport.assertClose(
            new float[] {2f, 2f, 2f, 2f}, results.get(1).toFloatArray(), 1e-6, 1e-6);
        results.forEach(Buffer::close);
        argument.close();
      }
    }
  }
}
