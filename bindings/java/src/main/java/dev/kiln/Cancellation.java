package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Stops running executions from another thread: pass it with {@link
 * ExecuteOptions#withCancellation(Cancellation)}, then {@link #cancel()} makes every {@link
 * Executable#execute(ExecuteOptions, Buffer...)} given it throw a {@link KilnException} with
 * {@link StatusCode#CANCELLED}, even one inside a {@code while} loop that never ends.
 *
 * <p>One-shot: once cancelled it stays cancelled, and an execution given it later throws
 * CANCELLED before it runs; create a new one for the next run. The executable, its client and
 * the argument buffers stay usable.
 *
 * <pre>{@code
 * try (Cancellation cancellation = Cancellation.create()) {
 *   timer.schedule(cancellation::cancel, 100, TimeUnit.MILLISECONDS);
 *   exe.execute(ExecuteOptions.DEFAULT.withCancellation(cancellation), x);
 * } catch (KilnException e) {
 *   // e.code() == StatusCode.CANCELLED
 * }
 * }</pre>
 *
 * <p>Thread-safe: {@link #cancel()} may be called from any thread, also at the same time as
 * {@link #close()} (a cancel after close does nothing, so a timer that fires late is harmless).
 * Like other handles it must not be closed while an execution given it is starting on another
 * thread.
 */
public final class Cancellation extends NativeHandle {
  private Cancellation(MemorySegment handle) {
    super(handle);
  }

  /** A cancellation that is not cancelled. Close it when done. */
  public static Cancellation create() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_cancellation_create.invokeExact(out));
      return new Cancellation(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  @Override
  void destroy(MemorySegment h) throws Throwable {
    Native.kiln_cancellation_destroy.invokeExact(h);
  }

  /**
   * Stops every execution running with this cancellation, on any thread, and makes later ones
   * given it fail at once. Calling it again, or after {@link #close()}, does nothing.
   */
  public synchronized void cancel() {
    // Synchronized with close(), which frees the native object this call writes.
    if (isClosed()) {
      return;
    }
    try {
      Native.kiln_cancellation_cancel.invokeExact(handle());
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Whether {@link #cancel()} was called; IllegalStateException once closed. */
  public synchronized boolean isCancelled() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      Native.check(
          (MemorySegment) Native.kiln_cancellation_is_cancelled.invokeExact(handle(), out));
      return out.get(JAVA_INT, 0) != 0;
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Frees the native object; later calls do nothing. */
  @Override
  public synchronized void close() {
    super.close();
  }

  @Override
  public synchronized String toString() {
    return "Cancellation["
        + (isClosed() ? "closed" : isCancelled() ? "cancelled" : "not cancelled")
        + "]";
  }
}
