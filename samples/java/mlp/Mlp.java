// A two-layer perceptron that computes XOR, built op by op with the Kiln Java binding and run
// on the default backend. Run it with ./run.sh (see README.md).
import dev.kiln.Buffer;
import dev.kiln.Builder;
import dev.kiln.Client;
import dev.kiln.Computation;
import dev.kiln.ElementType;
import dev.kiln.Executable;
import dev.kiln.Kiln;
import dev.kiln.Op;
import dev.kiln.Shape;

public class Mlp {
  /** relu(x . w1 + b1) . w2 + b2 for four 2-feature points, 2 hidden units, 1 output. */
  static Computation build() {
    try (Builder b = Builder.create("xor_mlp")) {
      Op input = b.parameter(0, Shape.of(ElementType.F32, 4, 2), "x");
      Op weights1 = b.parameter(1, Shape.of(ElementType.F32, 2, 2), "w1");
      Op bias1 = b.parameter(2, Shape.of(ElementType.F32, 2), "b1");
      Op weights2 = b.parameter(3, Shape.of(ElementType.F32, 2, 1), "w2");
      Op bias2 = b.parameter(4, Shape.of(ElementType.F32, 1), "b2");
      // add(..., 1): broadcast the bias along dimension 1; max with 0 is relu.
      Op hidden = b.max(b.add(b.dot(input, weights1), bias1, 1), b.constant(0f));
      Op output = b.add(b.dot(hidden, weights2), bias2, 1);
      return b.build(output);
    }
  }

  public static void main(String[] args) {
    // Four points, two features each: the XOR truth table.
    float[] x = {0, 0, 0, 1, 1, 0, 1, 1};
    // Hidden layer: h = relu(x . w1 + b1); output: y = h . w2 + b2.
    float[] w1 = {1, 1, 1, 1};
    float[] b1 = {0, -1};
    float[] w2 = {1, -2};
    float[] b2 = {0};

    try (Computation mlp = build();
        Client client = Client.create();
        Executable exe = client.compile(mlp);
        Buffer xs = client.buffer(x, 4, 2);
        Buffer w1s = client.buffer(w1, 2, 2);
        Buffer b1s = client.buffer(b1, 2);
        Buffer w2s = client.buffer(w2, 2, 1);
        Buffer b2s = client.buffer(b2, 1);
        Buffer ys = exe.execute(xs, w1s, b1s, w2s, b2s).get(0)) {
      System.out.printf("kiln %s, backend %s%n", Kiln.version(), client.backendName());
      float[] y = ys.toFloatArray();
      for (int i = 0; i < 4; i++) {
        System.out.printf("xor(%.0f, %.0f) = %.1f%n", x[2 * i], x[2 * i + 1], y[i]);
      }
    }
  }
}
