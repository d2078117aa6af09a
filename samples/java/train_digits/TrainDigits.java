// Trains a classifier of handwritten digits with the Kiln Java binding: the same job as
// samples/c/train_digits.c. The model's loss (a 64-64-10 perceptron with a ReLU and softmax
// cross-entropy over 8x8 images) is built op by op, Computation.valueAndGrad derives its
// gradient, and the optimiser (Adam, or --optimizer sgd for SGD with momentum) is a Kiln
// computation that calls the gradient and updates the weights, so each minibatch is one
// execution. One line per epoch; a loss-curve PNG at the end. The data is scikit-learn's 8x8
// digits, converted once by samples/data/make_digits.py. Deterministic; exits 1 when the
// held-out accuracy misses 95%. Run it with ./run.sh (see README.md).
import dev.kiln.Buffer;
import dev.kiln.Builder;
import dev.kiln.Client;
import dev.kiln.Computation;
import dev.kiln.ElementType;
import dev.kiln.Executable;
import dev.kiln.Op;
import dev.kiln.Shape;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleUnaryOperator;
import javax.imageio.ImageIO;

public class TrainDigits {
  static final long PIXELS = 64;
  static final long HIDDEN = 64;
  static final long CLASSES = 10;
  static final int BATCH = 32;
  static final double TARGET = 0.95;
  static final long[][] WEIGHT_DIMS = {{PIXELS, HIDDEN}, {HIDDEN}, {HIDDEN, CLASSES}, {CLASSES}};
  static final String[] WEIGHT_NAMES = {"w1", "b1", "w2", "b2"};

  /** (a, b) -> a + b, or max(a, b), over f32 scalars. */
  static Computation reducer(boolean maximum) {
    try (Builder b = Builder.create("reducer")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32), "a");
      Op y = b.parameter(1, Shape.of(ElementType.F32), "b");
      return b.build(maximum ? b.max(x, y) : b.add(x, y));
    }
  }

  static Op[] weightParameters(Builder b, long first, String prefix) {
    Op[] ops = new Op[4];
    for (int i = 0; i < 4; i++) {
      ops[i] = b.parameter(first + i, Shape.of(ElementType.F32, WEIGHT_DIMS[i]), prefix + WEIGHT_NAMES[i]);
    }
    return ops;
  }

  /**
   * (w1, b1, w2, b2, images u8[count,64], labels u8[count]) -> the mean softmax cross-entropy,
   * or (loss, correct) when {@code withAccuracy}.
   */
  static Computation buildLoss(long count, boolean withAccuracy) {
    try (Computation add = reducer(false);
        Computation maximum = reducer(true);
        Builder b = Builder.create("loss")) {
      Op[] w = weightParameters(b, 0, "");
      Op images = b.parameter(4, Shape.of(ElementType.U8, count, PIXELS), "images");
      Op labels = b.parameter(5, Shape.of(ElementType.U8, count), "labels");
      Op x = b.mul(b.convert(images, ElementType.F32), b.constant(1f / 16)); // 0..16 to [0, 1]
      Op hidden = b.max(b.add(b.dot(x, w[0]), w[1], 1), b.constant(0f)); // ReLU
      Op logits = b.add(b.dot(hidden, w[2]), w[3], 1);
      Op rowMax = b.reduce(logits, b.constant(Float.NEGATIVE_INFINITY), maximum, 1);
      Op shifted = b.sub(logits, rowMax, 0);
      Op logSumExp = b.log(b.reduce(b.exp(shifted), b.constant(0f), add, 1));
      Op classes = b.iota(Shape.of(ElementType.S32, count, CLASSES), 1);
      Op oneHot = b.convert(b.eq(classes, b.convert(labels, ElementType.S32), 0), ElementType.F32);
      Op picked = b.reduce(b.mul(shifted, oneHot), b.constant(0f), add, 1);
      Op loss =
          b.div(b.reduce(b.sub(logSumExp, picked), b.constant(0f), add, 0), b.constant((float) count));
      if (!withAccuracy) {
        return b.build(loss);
      }
      // Right when the label's logit is its row's maximum (its shifted logit 0).
      Op correct =
          b.reduce(b.convert(b.ge(picked, b.constant(0f)), ElementType.F32), b.constant(0f), add, 0);
      return b.build(b.tuple(loss, correct));
    }
  }

  /**
   * One training step: (weights..., state..., images, labels) -> (weights'..., state'..., loss).
   * Adam: m' = 0.9 m + 0.1 g, v' = 0.999 v + 0.001 g^2, t' = t + 1, w' = w - 0.003 (m' / (1 -
   * 0.9^t')) / (sqrt(v' / (1 - 0.999^t')) + 1e-8). SGD: u' = 0.9 u + g, w' = w - 0.05 u'.
   */
  static Computation buildStep(boolean adam, Computation valueAndGrad) {
    try (Builder b = Builder.create("step")) {
      Op[] w = weightParameters(b, 0, "");
      Op[] first = weightParameters(b, 4, "m_");
      Op[] second = adam ? weightParameters(b, 8, "v_") : null;
      Op t = adam ? b.parameter(12, Shape.of(ElementType.F32), "t") : null;
      long n = adam ? 13 : 8;
      Op images = b.parameter(n, Shape.of(ElementType.U8, BATCH, PIXELS), "images");
      Op labels = b.parameter(n + 1, Shape.of(ElementType.U8, BATCH), "labels");
      Op result = b.call(valueAndGrad, w[0], w[1], w[2], w[3], images, labels);
      List<Op> weights = new ArrayList<>();
      List<Op> state = new ArrayList<>();
      if (adam) {
        Op t1 = b.add(t, b.constant(1f));
        Op c1 = b.sub(b.constant(1f), b.pow(b.constant(0.9f), t1));
        Op c2 = b.sub(b.constant(1f), b.pow(b.constant(0.999f), t1));
        List<Op> vs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
          Op g = b.getTupleElement(result, 1 + i);
          Op m = b.add(b.mul(b.constant(0.9f), first[i]), b.mul(b.constant(0.1f), g));
          Op v = b.add(b.mul(b.constant(0.999f), second[i]), b.mul(b.constant(0.001f), b.mul(g, g)));
          Op update =
              b.div(b.div(m, c1), b.add(b.sqrt(b.div(v, c2)), b.constant(1e-8f)));
          weights.add(b.sub(w[i], b.mul(b.constant(0.003f), update)));
          state.add(m);
          vs.add(v);
        }
        state.addAll(vs);
        state.add(t1);
      } else {
        for (int i = 0; i < 4; i++) {
          Op u = b.add(b.mul(b.constant(0.9f), first[i]), b.getTupleElement(result, 1 + i));
          weights.add(b.sub(w[i], b.mul(b.constant(0.05f), u)));
          state.add(u);
        }
      }
      List<Op> outputs = new ArrayList<>(weights);
      outputs.addAll(state);
      outputs.add(b.getTupleElement(result, 0));
      return b.build(b.tuple(outputs.toArray(Op[]::new)));
    }
  }

  /** A small fixed-seed generator (xorshift64*), so every run is the same. */
  static long random = 0x2545F4914F6CDD1DL;

  static double uniform() {
    random ^= random >>> 12;
    random ^= random << 25;
    random ^= random >>> 27;
    return ((random * 0x2545F4914F6CDD1DL) >>> 11) / 9007199254740992.0;
  }

  static Buffer u8(Client client, byte[] data, long... dims) {
    return client.buffer(ElementType.U8, MemorySegment.ofArray(data), dims, null);
  }

  /** Batch losses (light blue), per-epoch training (blue) and held-out (orange) losses. */
  static void writeCurve(
      Path path, List<Double> batch, List<Double> train, List<Double> test, int stepsPerEpoch)
      throws IOException {
    int width = 640;
    int height = 360;
    double margin = 24;
    BufferedImage image = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, width, height);
    double top = 0.5;
    for (double loss : batch) {
      top = Math.max(top, loss);
    }
    double steps = batch.size();
    double scale = top;
    DoubleUnaryOperator x = s -> margin + (width - 2 * margin) * s / steps;
    DoubleUnaryOperator y =
        v -> height - margin - (height - 2 * margin) * Math.min(v, scale) / scale;
    g.setColor(new Color(225, 225, 225));
    for (double level = 0.5; level < top; level += 0.5) {
      g.drawLine((int) x.applyAsDouble(0), (int) y.applyAsDouble(level), (int) x.applyAsDouble(steps),
          (int) y.applyAsDouble(level));
    }
    g.setColor(new Color(170, 200, 235));
    for (int i = 1; i < batch.size(); i++) {
      g.drawLine((int) x.applyAsDouble(i - 1), (int) y.applyAsDouble(batch.get(i - 1)),
          (int) x.applyAsDouble(i), (int) y.applyAsDouble(batch.get(i)));
    }
    g.setStroke(new BasicStroke(2));
    Color[] colours = {new Color(31, 100, 180), new Color(235, 120, 20)};
    List<List<Double>> curves = List.of(train, test);
    for (int c = 0; c < 2; c++) {
      g.setColor(colours[c]);
      for (int i = 1; i < train.size(); i++) {
        g.drawLine((int) x.applyAsDouble(i * stepsPerEpoch), (int) y.applyAsDouble(curves.get(c).get(i - 1)),
            (int) x.applyAsDouble((i + 1) * stepsPerEpoch), (int) y.applyAsDouble(curves.get(c).get(i)));
      }
    }
    g.setStroke(new BasicStroke(1));
    g.setColor(new Color(60, 60, 60));
    g.drawLine((int) x.applyAsDouble(0), (int) y.applyAsDouble(0), (int) x.applyAsDouble(steps),
        (int) y.applyAsDouble(0));
    g.dispose();
    ImageIO.write(image, "png", path.toFile());
  }

  static boolean usage() {
    System.err.println(
        "usage: TrainDigits [--optimizer adam|sgd] [--epochs N] [--backend NAME] [--data-dir DIR]"
            + " [--output FILE.png]");
    System.exit(2);
    return false;
  }

  public static void main(String[] args) throws IOException {
    boolean adam = true;
    int epochs = 20;
    String backend = null;
    Path dataDir = Path.of(System.getProperty("kiln.samples.data", "samples/data"));
    Path output = Path.of("train_digits_loss.png");
    for (int i = 0; i < args.length; i += 2) {
      String value = i + 1 < args.length ? args[i + 1] : "";
      switch (args[i]) {
        case "--optimizer" -> adam = value.equals("adam") || !value.equals("sgd") && usage();
        case "--epochs" -> epochs = Integer.parseInt(value);
        case "--backend" -> backend = value;
        case "--data-dir" -> dataDir = Path.of(value);
        case "--output" -> output = Path.of(value);
        default -> usage();
      }
    }
    long start = System.nanoTime();
    try (Client client = backend == null ? Client.create() : Client.create(backend)) {
      byte[][] images = new byte[2][];
      byte[][] labels = new byte[2][];
      int[] counts = new int[2];
      String[] names = {"train", "test"};
      for (int s = 0; s < 2; s++) {
        try (Buffer x = client.readNpy(dataDir.resolve("digits_" + names[s] + "_images.npy"), ElementType.U8);
            Buffer y = client.readNpy(dataDir.resolve("digits_" + names[s] + "_labels.npy"), ElementType.U8)) {
          images[s] = x.toBytes();
          labels[s] = y.toBytes();
          counts[s] = (int) x.dimensions()[0];
        }
      }
      // The computations: the loss, its gradient (Kiln's reverse mode), the training step
      // around it, and the evaluation of each split.
      Executable step;
      try (Computation loss = buildLoss(BATCH, false);
          Computation gradient = loss.valueAndGrad(0, 1, 2, 3);
          Computation stepComputation = buildStep(adam, gradient)) {
        step = client.compile(stepComputation);
      }
      Executable[] evaluate = new Executable[2];
      Buffer[][] splits = new Buffer[2][];
      for (int s = 0; s < 2; s++) {
        try (Computation computation = buildLoss(counts[s], true)) {
          evaluate[s] = client.compile(computation);
        }
        splits[s] = new Buffer[] {u8(client, images[s], counts[s], PIXELS), u8(client, labels[s], counts[s])};
      }
      // Glorot-uniform weights, zero biases and optimiser state.
      int slots = adam ? 9 : 4;
      List<Buffer> state = new ArrayList<>();
      for (int i = 0; i < 4 + slots; i++) {
        long[] dims = adam && i == 4 + slots - 1 ? new long[0] : WEIGHT_DIMS[i % 4];
        int size = 1;
        for (long d : dims) {
          size *= (int) d;
        }
        float[] values = new float[size];
        if (i < 4 && dims.length == 2) {
          double limit = Math.sqrt(6.0 / (dims[0] + dims[1]));
          for (int j = 0; j < size; j++) {
            values[j] = (float) ((2 * uniform() - 1) * limit);
          }
        }
        state.add(client.buffer(values, dims));
      }
      String about = adam ? "Adam (learning rate 0.003)" : "SGD with momentum 0.9 (learning rate 0.05)";
      System.out.printf(
          "Training a 64-64-10 classifier of 8x8 handwritten digits on %s with Kiln's own gradients:%n"
              + "%d training images, %d held out; %s, batches of %d; the data, the computations and"
              + " their%ncompilation took %.2f s.%n",
          client.backendName(), counts[0], counts[1], about, BATCH, (System.nanoTime() - start) / 1e9);

      int stepsPerEpoch = counts[0] / BATCH;
      int[] order = new int[counts[0]];
      for (int i = 0; i < order.length; i++) {
        order[i] = i;
      }
      List<Double> batchLosses = new ArrayList<>();
      List<Double> trainLosses = new ArrayList<>();
      List<Double> testLosses = new ArrayList<>();
      double accuracy = 0;
      start = System.nanoTime();
      byte[] batchImages = new byte[BATCH * (int) PIXELS];
      byte[] batchLabels = new byte[BATCH];
      for (int epoch = 0; epoch < epochs; epoch++) {
        long epochStart = System.nanoTime();
        for (int i = order.length - 1; i > 0; i--) {
          int j = (int) (uniform() * (i + 1));
          int swap = order[i];
          order[i] = order[j];
          order[j] = swap;
        }
        double sum = 0;
        for (int b = 0; b < stepsPerEpoch; b++) {
          for (int k = 0; k < BATCH; k++) {
            int row = order[b * BATCH + k];
            System.arraycopy(images[0], row * (int) PIXELS, batchImages, k * (int) PIXELS, (int) PIXELS);
            batchLabels[k] = labels[0][row];
          }
          List<Buffer> arguments = new ArrayList<>(state);
          try (Buffer x = u8(client, batchImages, BATCH, PIXELS);
              Buffer y = u8(client, batchLabels, BATCH)) {
            arguments.add(x);
            arguments.add(y);
            List<Buffer> results = step.execute(arguments.toArray(Buffer[]::new));
            // The step's results are the next step's weights and state.
            state.forEach(Buffer::close);
            state = new ArrayList<>(results.subList(0, results.size() - 1));
            try (Buffer loss = results.get(results.size() - 1)) {
              double value = loss.toFloatArray()[0];
              batchLosses.add(value);
              sum += value;
            }
          }
        }
        double[] splitLoss = new double[2];
        double[] splitAccuracy = new double[2];
        for (int s = 0; s < 2; s++) {
          List<Buffer> arguments = new ArrayList<>(state.subList(0, 4));
          arguments.addAll(List.of(splits[s]));
          List<Buffer> results = evaluate[s].execute(arguments.toArray(Buffer[]::new));
          splitLoss[s] = results.get(0).toFloatArray()[0];
          splitAccuracy[s] = results.get(1).toFloatArray()[0] / counts[s];
          results.forEach(Buffer::close);
        }
        accuracy = splitAccuracy[1];
        trainLosses.add(sum / stepsPerEpoch);
        testLosses.add(splitLoss[1]);
        System.out.printf(
            "epoch %2d/%d  loss %.4f  held-out loss %.4f  accuracy: train %5.1f%%  held-out %5.1f%%"
                + "  (%d ms)%n",
            epoch + 1, epochs, trainLosses.get(epoch), splitLoss[1], 100 * splitAccuracy[0],
            100 * accuracy, (System.nanoTime() - epochStart) / 1_000_000);
      }
      System.out.printf(
          "held-out accuracy %.1f%% after %d epochs (%d steps) in %.2f s: %s the %.0f%% target%n",
          100 * accuracy, epochs, batchLosses.size(), (System.nanoTime() - start) / 1e9,
          accuracy >= TARGET ? "reached" : "MISSED", 100 * TARGET);
      writeCurve(output, batchLosses, trainLosses, testLosses, stepsPerEpoch);
      System.out.printf(
          "wrote %s: the loss per batch (light blue), and per epoch on the training (blue) and%n"
              + "held-out (orange) images%n",
          output);
      state.forEach(Buffer::close);
      for (int s = 0; s < 2; s++) {
        for (Buffer buffer : splits[s]) {
          buffer.close();
        }
        evaluate[s].close();
      }
      step.close();
      if (accuracy < TARGET) {
        System.exit(1);
      }
    }
  }
}
