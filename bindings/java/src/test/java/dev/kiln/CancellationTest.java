package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Deadlines and cancellation stop a {@code while} loop that never ends, on every backend, and
 * leave the client, the executable and the buffers usable.
 */
class CancellationTest {
  /**
   * count_to, shared by the bindings' tests: counts i up from 0 while i != n, and for n = -1 that
   * is 2^64 iterations.
   */
  static final String COUNT_TO = TestSupport.readTestdata("count_to.hlo");

  /** Far longer than any test takes, so that a stop it reports is the stop asked for. */
  static final Duration GENEROUS = Duration.ofMinutes(10);

  static ScheduledExecutorService timer;

  @BeforeAll
  static void startTimer() {
    timer = Executors.newSingleThreadScheduledExecutor();
  }

  @AfterAll
  static void stopTimer() {
    timer.shutdownNow();
  }

  static Executable countTo(Client client) {
    try (Computation computation = Computation.fromHloText(COUNT_TO)) {
      return client.compile(computation);
    }
  }

  /** A while loop over an f32 whose condition is the constant true, built with the builder. */
  static Computation forever() {
    Shape scalar = Shape.of(ElementType.F32);
    try (Builder c = Builder.create("cond");
        Builder body = Builder.create("body");
        Builder b = Builder.create("forever")) {
      c.parameter(0, scalar);
      try (Computation condition = c.build(c.constant(true));
          Computation step =
              body.build(body.add(body.parameter(0, scalar), body.constant(1f)))) {
        return b.build(b.whileLoop(condition, step, b.parameter(0, scalar)));
      }
    }
  }

  /**
   * Normal computations on what a stopped run used: exe counts to 7, and endless (-1) is
   * unchanged and negates to 1 on another executable of the same client.
   */
  static void assertUsable(Client client, Executable exe, Buffer endless) {
    assertArrayEquals(new long[] {-1}, endless.toLongArray());
    try (Buffer seven = client.buffer(new long[] {7});
        Buffer out = exe.execute(ExecuteOptions.DEFAULT.withTimeout(GENEROUS), seven).get(0)) {
      assertArrayEquals(new long[] {7}, out.toLongArray());
    }
    try (Builder b = Builder.create("negate");
        Computation negate = b.build(b.neg(b.parameter(0, Shape.of(ElementType.S64))));
        Executable negExe = client.compile(negate);
        Buffer out = negExe.execute(endless).get(0)) {
      assertArrayEquals(new long[] {1}, out.toLongArray());
    }
  }

  /**
   * Runs {@code test} on a client of each backend of the build, one after another, closing the
   * client after it. A backend that cannot run on this machine (its client creation fails with
   * UNAVAILABLE, as cuda's does without the NVIDIA driver) is skipped, saying why; any other
   * failure to create a client is thrown, and a run in which every backend was skipped fails.
   */
  static void forEachBackend(BiConsumer<String, Client> test) {
    List<String> backends = Kiln.backends();
    int tested = 0;
    for (String backend : backends) {
      Client client;
      try {
        client = Client.create(backend);
      } catch (KilnException e) {
        if (e.code() != StatusCode.UNAVAILABLE) {
          throw e;
        }
        System.out.println("skipping backend " + backend + ": " + e.getMessage());
        continue;
      }
      try (client) {
        test.accept(backend, client);
      }
      tested++;
    }
    assertTrue(tested > 0, "every backend of " + backends + " was skipped: nothing was tested");
  }

  @Test
  void aTimeoutStopsAnEndlessLoopAndEverythingStaysUsable() {
    forEachBackend(
        (backend, client) -> {
          try (Executable exe = countTo(client);
              Buffer endless = client.buffer(new long[] {-1})) {
            long start = System.nanoTime();
            KilnException e =
                assertThrows(
                    KilnException.class,
                    () ->
                        exe.execute(
                            ExecuteOptions.DEFAULT.withTimeout(Duration.ofMillis(50)), endless));
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            assertEquals(StatusCode.DEADLINE_EXCEEDED, e.code(), backend + ": " + e);
            assertTrue(e.getMessage().contains("while 'loop'"), backend + ": " + e);
            assertTrue(
                elapsed.compareTo(Duration.ofMillis(50)) >= 0
                    && elapsed.compareTo(Duration.ofSeconds(30)) < 0,
                backend + ": stopped after " + elapsed);
            assertUsable(client, exe, endless);
          }
        });
  }

  @Test
  void cancelFromAnotherThreadStopsAnEndlessLoop() {
    forEachBackend(
        (backend, client) -> {
          try (Executable exe = countTo(client);
              Buffer endless = client.buffer(new long[] {-1});
              Cancellation cancellation = Cancellation.create()) {
            assertFalse(cancellation.isCancelled());
            timer.schedule(cancellation::cancel, 50, TimeUnit.MILLISECONDS);
            ExecuteOptions options =
                ExecuteOptions.DEFAULT.withCancellation(cancellation).withTimeout(GENEROUS);
            KilnException e =
                assertThrows(KilnException.class, () -> exe.execute(options, endless));
            assertEquals(StatusCode.CANCELLED, e.code(), backend + ": " + e);
            assertTrue(cancellation.isCancelled());
            cancellation.cancel(); // again: nothing happens
            assertUsable(client, exe, endless);
          }
        });
  }

  @Test
  void cancelStopsAWhileLoopBuiltWithTheBuilder() {
    try (Client client = Client.create();
        Computation computation = forever();
        Executable exe = client.compile(computation);
        Buffer x = client.buffer(new float[] {0});
        Cancellation cancellation = Cancellation.create()) {
      timer.schedule(cancellation::cancel, 50, TimeUnit.MILLISECONDS);
      KilnException e =
          assertThrows(
              KilnException.class,
              () -> exe.execute(ExecuteOptions.DEFAULT.withCancellation(cancellation), x));
      assertEquals(StatusCode.CANCELLED, e.code(), e.toString());
    }
  }

  @Test
  void anAlreadyCancelledCancellationFailsBeforeRunning() {
    try (Client client = Client.create();
        Executable exe = countTo(client);
        Buffer seven = client.buffer(new long[] {7});
        Cancellation cancellation = Cancellation.create()) {
      cancellation.cancel();
      // count_to(7) ends at once on its own: only a refusal to start explains CANCELLED.
      KilnException e =
          assertThrows(
              KilnException.class,
              () -> exe.execute(ExecuteOptions.DEFAULT.withCancellation(cancellation), seven));
      assertEquals(StatusCode.CANCELLED, e.code());
      try (Buffer out = exe.execute(seven).get(0)) {
        assertArrayEquals(new long[] {7}, out.toLongArray());
      }
    }
  }

  @Test
  void unusedCancellationAndLongTimeoutsChangeNothing() {
    try (Client client = Client.create();
        Executable exe = countTo(client);
        Buffer n = client.buffer(new long[] {100});
        Cancellation cancellation = Cancellation.create()) {
      // Duration.ofSeconds(Long.MAX_VALUE) overflows timeout_ns: cut to Long.MAX_VALUE ns.
      Duration[] timeouts = {Duration.ofHours(1), Duration.ofSeconds(Long.MAX_VALUE)};
      for (Duration timeout : timeouts) {
        ExecuteOptions options = new ExecuteOptions(1, timeout, cancellation);
        try (Buffer out = exe.execute(options, n).get(0)) {
          assertArrayEquals(new long[] {100}, out.toLongArray());
        }
      }
      assertFalse(cancellation.isCancelled());
      assertEquals(new ExecuteOptions(5), ExecuteOptions.DEFAULT.withRngSeed(5));
    }
  }

  @Test
  void badTimeoutsAreInvalidArgument() {
    try (Client client = Client.create();
        Executable exe = countTo(client);
        Buffer n = client.buffer(new long[] {1})) {
      Duration[] timeouts = {
        Duration.ofMillis(-50), Duration.ofSeconds(Long.MIN_VALUE), Duration.ZERO
      };
      for (Duration timeout : timeouts) {
        KilnException e =
            assertThrows(
                KilnException.class,
                () -> exe.execute(ExecuteOptions.DEFAULT.withTimeout(timeout), n),
                timeout.toString());
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), e.toString());
        assertTrue(e.getMessage().contains("timeout"), e.getMessage());
      }
      // A negative one is refused by the library itself, which names the C field.
      KilnException negative =
          assertThrows(
              KilnException.class,
              () -> exe.execute(ExecuteOptions.DEFAULT.withTimeout(Duration.ofMillis(-50)), n));
      assertTrue(negative.getMessage().contains("timeout_ns"), negative.getMessage());
      // The executable is fine afterwards.
      try (Buffer out = exe.execute(n).get(0)) {
        assertArrayEquals(new long[] {1}, out.toLongArray());
      }
    }
  }

  @Test
  void aClosedCancellationIsAJavaErrorAndCancelAfterCloseDoesNothing() {
    try (Client client = Client.create();
        Executable exe = countTo(client);
        Buffer n = client.buffer(new long[] {1})) {
      Cancellation cancellation = Cancellation.create();
      cancellation.close();
      cancellation.close(); // idempotent
      cancellation.cancel(); // a late timer: harmless
      assertThrows(IllegalStateException.class, cancellation::isCancelled);
      assertThrows(
          IllegalStateException.class,
          () -> exe.execute(ExecuteOptions.DEFAULT.withCancellation(cancellation), n));
      assertEquals("Cancellation[closed]", cancellation.toString());
    }
  }

  @Test
  void cancelRacingCloseIsSafe() throws Exception {
    for (int i = 0; i < 1000; i++) {
      Cancellation cancellation = Cancellation.create();
      var cancelled = timer.submit(cancellation::cancel);
      cancellation.close();
      cancelled.get();
    }
  }
}
