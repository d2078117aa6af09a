package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** executeAsync: chains, events and futures, failures, and donation. */
class AsyncExecutionTest {
  static final Duration GENEROUS = Duration.ofMinutes(10);

  static Executable negate(Client client) {
    try (Builder b = Builder.create("negate");
        Computation c = b.build(b.neg(b.parameter(0, Shape.of(ElementType.S64))))) {
      return client.compile(c);
    }
  }

  @Test
  void aChainOfAsyncExecutionsAwaitedAtTheEnd() {
    CancellationTest.forEachBackend(
        (backend, client) -> {
          try (Executable exe = DeviceTest.addOne(client);
              Buffer x = client.buffer(new float[] {1, 2, 3, 4}, 4)) {
            List<Execution> runs = new ArrayList<>();
            Buffer last = x;
            for (int i = 0; i < 10; i++) {
              Execution run = exe.executeAsync(last);
              runs.add(run);
              last = run.results().get(0);
              // Shapes are known at once.
              assertEquals(Shape.of(ElementType.F32, 4), last.shape(), backend);
            }
            assertEquals(runs.get(9).results(), runs.get(9).await(), backend);
            for (Execution run : runs) {
              assertTrue(run.event().isReady(), backend);
            }
            assertArrayEquals(new float[] {11, 12, 13, 14}, last.toFloatArray(), backend);
            try (Event ready = last.readyEvent()) {
              assertTrue(ready.isReady());
              ready.await();
            }
            for (Execution run : runs) {
              run.close();
              run.close(); // idempotent
              run.results().get(0).close();
            }
          }
        });
  }

  @Test
  void aChainOfAsyncExecutionsThroughCompletableFutures() throws Exception {
    try (Client client = Client.create("cpu", 2);
        Executable exe = DeviceTest.addOne(client);
        Buffer x = client.device(1).buffer(new float[] {0, 0, 0, 0}, 4)) {
      // Each step is started from the previous step's future (not on the library's thread).
      CompletableFuture<List<Buffer>> chain = CompletableFuture.completedFuture(List.of(x));
      List<Execution> runs = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        chain =
            chain.thenCompose(
                previous -> {
                  Execution run = exe.executeAsync(previous.get(0));
                  synchronized (runs) {
                    runs.add(run);
                  }
                  return run.future();
                });
      }
      List<Buffer> out = chain.get(60, TimeUnit.SECONDS);
      assertArrayEquals(new float[] {5, 5, 5, 5}, out.get(0).toFloatArray());
      assertEquals(client.device(1), out.get(0).device());
      // A future of a finished execution completes too (the callback runs at once).
      runs.get(0).event().toFuture().get(60, TimeUnit.SECONDS);
      for (Execution run : runs) {
        run.close();
      }
    }
  }

  @Test
  void anAsyncFailureSurfacesWhenAwaitedAndWhenReadingResults() throws Exception {
    CancellationTest.forEachBackend(
        (backend, client) -> {
          try (Executable countTo = CancellationTest.countTo(client);
              Executable neg = negate(client);
              Buffer endless = client.buffer(new long[] {-1})) {
            Execution run =
                countTo.executeAsync(
                    ExecuteOptions.DEFAULT.withTimeout(Duration.ofMillis(50)), endless);
            // The next run depends on the failing one: it fails with the same error.
            Execution next = neg.executeAsync(run.results().get(0));
            Buffer result = run.results().get(0);
            KilnException awaited = assertThrows(KilnException.class, run::await, backend);
            assertEquals(StatusCode.DEADLINE_EXCEEDED, awaited.code(), backend + ": " + awaited);
            assertTrue(awaited.getMessage().contains("while 'loop'"), backend + ": " + awaited);
            KilnException read = assertThrows(KilnException.class, result::toLongArray, backend);
            assertEquals(StatusCode.DEADLINE_EXCEEDED, read.code(), backend + ": " + read);
            try (Event ready = result.readyEvent()) {
              KilnException e = assertThrows(KilnException.class, ready::await, backend);
              assertEquals(StatusCode.DEADLINE_EXCEEDED, e.code(), backend + ": " + e);
            }
            KilnException chained = assertThrows(KilnException.class, next::await, backend);
            assertEquals(StatusCode.DEADLINE_EXCEEDED, chained.code(), backend + ": " + chained);
            KilnException chainedRead =
                assertThrows(
                    KilnException.class, () -> next.results().get(0).toLongArray(), backend);
            assertEquals(StatusCode.DEADLINE_EXCEEDED, chainedRead.code(), backend);
            // Through the future: exceptional with the same KilnException.
            ExecutionException viaFuture =
                assertThrows(
                    ExecutionException.class, () -> run.future().get(60, TimeUnit.SECONDS));
            KilnException cause = assertInstanceOf(KilnException.class, viaFuture.getCause());
            assertEquals(StatusCode.DEADLINE_EXCEEDED, cause.code(), backend);
            ExecutionException nextFuture =
                assertThrows(
                    ExecutionException.class, () -> next.future().get(60, TimeUnit.SECONDS));
            assertEquals(
                StatusCode.DEADLINE_EXCEEDED,
                assertInstanceOf(KilnException.class, nextFuture.getCause()).code());
            run.close();
            next.close();
            result.close();
            next.results().get(0).close();
            CancellationTest.assertUsable(client, countTo, endless);
          }
        });
  }

  @Test
  void aCancelledAsyncExecutionIsCancelled() throws Exception {
    try (Client client = Client.create();
        Executable countTo = CancellationTest.countTo(client);
        Buffer endless = client.buffer(new long[] {-1});
        Cancellation cancellation = Cancellation.create()) {
      try (Execution run =
          countTo.executeAsync(
              ExecuteOptions.DEFAULT.withCancellation(cancellation).withTimeout(GENEROUS),
              endless)) {
        assertTrue(!run.event().isReady());
        cancellation.cancel();
        KilnException e = assertThrows(KilnException.class, run::await);
        assertEquals(StatusCode.CANCELLED, e.code(), e.toString());
        run.results().get(0).close();
      }
    }
  }

  @Test
  void argumentsAndTheExecutableMayBeClosedWhileARunIsPending() {
    try (Client client = Client.create()) {
      Executable exe = DeviceTest.addOne(client);
      Buffer x = client.buffer(new float[] {1, 2, 3, 4}, 4);
      try (Execution run = exe.executeAsync(x)) {
        x.close();
        exe.close();
        assertArrayEquals(new float[] {2, 3, 4, 5}, run.await().get(0).toFloatArray());
      }
    }
  }

  @Test
  void aDonatedArgumentMayOnlyBeClosed() {
    CancellationTest.forEachBackend(
        (backend, client) -> {
          try (Executable exe = DeviceTest.addOne(client);
              Buffer kept = client.buffer(new float[] {1, 2, 3, 4}, 4);
              Buffer donated = client.buffer(new float[] {1, 2, 3, 4}, 4)) {
            ExecuteOptions donate = ExecuteOptions.DEFAULT.withDonatedArguments(0);
            try (Buffer out = exe.execute(donate, donated).get(0)) {
              assertArrayEquals(new float[] {2, 3, 4, 5}, out.toFloatArray(), backend);
            }
            KilnException read = assertThrows(KilnException.class, donated::toFloatArray);
            assertEquals(StatusCode.FAILED_PRECONDITION, read.code(), backend + ": " + read);
            KilnException run = assertThrows(KilnException.class, () -> exe.execute(donated));
            assertEquals(StatusCode.FAILED_PRECONDITION, run.code(), backend + ": " + run);
            KilnException again =
                assertThrows(KilnException.class, () -> exe.executeAsync(donate, donated));
            assertEquals(StatusCode.FAILED_PRECONDITION, again.code(), backend + ": " + again);
            // Async donation of a pending result, then a bad index and a repeat: nothing donated.
            try (Execution first = exe.executeAsync(kept);
                Execution second = exe.executeAsync(donate, first.results().get(0))) {
              assertArrayEquals(
                  new float[] {3, 4, 5, 6}, second.await().get(0).toFloatArray(), backend);
              KilnException gone =
                  assertThrows(KilnException.class, first.results().get(0)::toFloatArray);
              assertEquals(StatusCode.FAILED_PRECONDITION, gone.code(), backend + ": " + gone);
              first.results().get(0).close();
              second.results().get(0).close();
            }
            for (ExecuteOptions bad :
                List.of(
                    ExecuteOptions.DEFAULT.withDonatedArguments(1),
                    ExecuteOptions.DEFAULT.withDonatedArguments(0, 0))) {
              KilnException e = assertThrows(KilnException.class, () -> exe.execute(bad, kept));
              assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), backend + ": " + e);
            }
            assertArrayEquals(new float[] {1, 2, 3, 4}, kept.toFloatArray(), backend);
          }
        });
  }
}
