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

  /** Runs {@code cycle} n times and returns how far the resident set grew, in KiB. */
  static long window(String what, int n, Runnable cycle) {
    long before = settledRss();
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      cycle.run();
    }
    long after = settledRss();
    System.out.printf(
        "kiln java: %d %s in %.1f s, VmRSS %d -> %d KiB%n",
        n, what, (System.nanoTime() - start) / 1e9, before, after);
    return after - before;
  }

  /**
   * Fails when n cycles after a warm-up grow the resident set by SLACK_KIB or more. A window
   * that grew is run again: a leak grows every window, while a one-off step (the Java heap or a
   * malloc arena growing once) does not repeat, so only a second growing window fails.
   */
  static void assertFlat(String what, int n, Runnable cycle) {
    for (int i = 0; i < Math.max(1, n / 10); i++) {
      cycle.run();
    }
    if (window(what, n, cycle) < SLACK_KIB) {
      return;
    }
    long growth = window(what + " (confirming window)", n, cycle);
    assertTrue(
        growth < SLACK_KIB,
        "resident memory grew by " + growth + " KiB over " + n + " " + what + ", twice in a row");
  }

  @Test
  void fullCyclesDoNotGrowResidentMemory() {
    assertFlat("full client+compile cycles", COMPILE_ITERATIONS, LifecycleMemoryTest::fullCycle);
  }

  @Test
  void builderAndBufferCyclesDoNotGrowResidentMemory() {
    try (Client client = Client.create();
        Computation c = tiny();
        Executable exe = client.compile(c)) {
      assertFlat("builder+buffer+execute cycles", ITERATIONS, () -> lightCycle(client, exe));
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
