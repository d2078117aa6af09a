package dev.kiln;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * An execution started by {@link Executable#executeAsync(ExecuteOptions, Buffer...)}: its result
 * buffers, there at once (their shapes are known; reading one waits until it is filled), and
 * its completion {@link Event}. When the execution fails (a stop, an error at run time, or a
 * failed argument) the event, the {@link #future()} and reading any result report that error as
 * a {@link KilnException}.
 *
 * <p>The results are the caller's, as those of {@link Executable#execute(Buffer...)} (closing
 * the client also closes them); {@link #close()} closes only the event.
 */
public final class Execution implements AutoCloseable {
  private final List<Buffer> results;
  private final Event event;
  private final CompletableFuture<List<Buffer>> future;

  Execution(List<Buffer> results, Event event) {
    this.results = List.copyOf(results);
    this.event = event;
    this.future = event.toFuture().thenApply(done -> this.results);
  }

  /** The result leaves, in order; they may be passed to further executions at once. */
  public List<Buffer> results() {
    return results;
  }

  /** The completion event. */
  public Event event() {
    return event;
  }

  /**
   * A future completed with {@link #results()} when the execution ends, or exceptionally with
   * its {@link KilnException} (see {@link Event#toFuture()}).
   */
  public CompletableFuture<List<Buffer>> future() {
    return future;
  }

  /**
   * Blocks until the execution ends and returns {@link #results()}; throws its {@link
   * KilnException} when it failed.
   */
  public List<Buffer> await() {
    event.await();
    return results;
  }

  /** Closes the event (not the results); idempotent. */
  @Override
  public void close() {
    event.close();
  }
}
