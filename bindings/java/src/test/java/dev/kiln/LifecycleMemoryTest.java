package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * (d) Creating and destroying clients, builders, computations, executables and buffers over
 * and over does not grow resident memory. The iteration counts can be lowered with
 * -Dkiln.test.iterations / -Dkiln.test.compileIterations.
 */
class LifecycleMemoryTest {
  static final int ITERATIONS = Integer.getInteger("kiln.test.iterations", 100_000);
  static final int COMPILE_ITERATIONS =
      Integer.getInteger("kiln.test.compileIterations", 100_000);
  /** Growth allowed after warm-up: small and fixed, far below one leaked object per loop. */
  static final long SLACK_KIB = 8 * 1024;

  static Computation tiny() {
    try (Builder b = Builder.create("tiny")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32, 4), "x");
      b.mul(b.add(x, b.constant(1f)), b.constant(2f));
      return b.build();
    }
  }

  static final float[] INPUT = {0f, 1f, 2f, 3f};
  static final float[] OUTPUT = {2f, 4f, 6f, 8f};

  /** One full cycle: client, builder, computation, executable, buffers, all closed. */
  static void fullCycle() {
    try (Client client = Client.create();
        Computation c = tiny();
        Executable exe = client.compile(c);
        Buffer in = client.buffer(INPUT, 4)) {
      List<Buffer> out = exe.execute(in);
      try (Buffer y = out.get(0)) {
        float[] got = y.toFloatArray();
        if (got[3] != OUTPUT[3]) {
          throw new AssertionError("wrong result " + got[3]);
        }
      }
    }
  }

  /** A cycle on a long-lived client and executable: builder, computation and buffers. */
  static void lightCycle(Client client, Executable exe) {
    try (Computation c = tiny();
        Buffer in = client.buffer(INPUT, 4)) {
      assertEquals(1, c.parameterCount());
      try (Buffer y = exe.execute(in).get(0)) {
        if (y.toFloatArray()[0] != OUTPUT[0]) {
          throw new AssertionError("wrong result");
        }
      }
    }
  }

  static long settledRss() {
    System.gc();
    return TestSupport.residentKib();
  }

  @Test
  void fullCyclesDoNotGrowResidentMemory() {
    int warmup = Math.max(1, COMPILE_ITERATIONS / 10);
    for (int i = 0; i < warmup; i++) {
      fullCycle();
    }
    long before = settledRss();
    long start = System.nanoTime();
    for (int i = 0; i < COMPILE_ITERATIONS; i++) {
      fullCycle();
    }
    long after = settledRss();
    System.out.printf(
        "kiln java: %d full client+compile cycles in %.1f s, VmRSS %d -> %d KiB%n",
        COMPILE_ITERATIONS, (System.nanoTime() - start) / 1e9, before, after);
    assertTrue(
        after - before < SLACK_KIB,
        "resident memory grew by " + (after - before) + " KiB over " + COMPILE_ITERATIONS);
  }

  @Test
  void builderAndBufferCyclesDoNotGrowResidentMemory() {
    try (Client client = Client.create();
        Computation c = tiny();
        Executable exe = client.compile(c)) {
      int warmup = Math.max(1, ITERATIONS / 10);
      for (int i = 0; i < warmup; i++) {
        lightCycle(client, exe);
      }
      long before = settledRss();
      long start = System.nanoTime();
      for (int i = 0; i < ITERATIONS; i++) {
        lightCycle(client, exe);
      }
      long after = settledRss();
      System.out.printf(
          "kiln java: %d builder+buffer+execute cycles in %.1f s, VmRSS %d -> %d KiB%n",
          ITERATIONS, (System.nanoTime() - start) / 1e9, before, after);
      assertTrue(
          after - before < SLACK_KIB,
          "resident memory grew by " + (after - before) + " KiB over " + ITERATIONS);
    }
  }

  @Test
  void closingTheClientClosesItsBuffersAndExecutables() {
    Client client = Client.create();
    Buffer b = client.buffer(INPUT, 4);
    Executable exe;
    try (Computation c = tiny()) {
      exe = client.compile(c);
    }
    client.close();
    assertTrue(b.isClosed());
    assertTrue(exe.isClosed());
    client.close(); // idempotent
  }
}
