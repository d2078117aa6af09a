package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The completion of background work ({@code kiln_event_t}): an {@link
 * Executable#executeAsync(ExecuteOptions, Buffer...) asynchronous execution} or the filling of
 * a buffer ({@link Buffer#readyEvent()}). One-shot: it becomes ready once, with success or the
 * work's error. Closing it cancels nothing, and it may outlive the client, executable and
 * buffers of its work (it belongs to none of them). Thread-safe.
 */
public final class Event extends NativeHandle {
  Event(MemorySegment handle) {
    super(handle);
  }

  @Override
  void destroy(MemorySegment h) throws Throwable {
    Native.kiln_event_destroy.invokeExact(h);
  }

  /**
   * Blocks until the event is ready; returns when the work succeeded and throws its error as a
   * {@link KilnException} otherwise. May be called any number of times, from any thread.
   */
  public void await() {
    try {
      Native.check((MemorySegment) Native.kiln_event_await.invokeExact(handle()));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Whether the event is ready (the work ended, well or not). Never blocks. */
  public boolean isReady() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      Native.check((MemorySegment) Native.kiln_event_is_ready.invokeExact(handle(), out));
      return out.get(JAVA_INT, 0) != 0;
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * A future completed when the event is ready ({@code kiln_event_on_ready}): normally on
   * success, exceptionally with the work's {@link KilnException} otherwise. It completes even if
   * this event is closed first. Each call registers a new callback and returns a new future.
   *
   * <p>The library's callback runs on its worker thread, which must not block; the future is
   * therefore completed from the future's {@linkplain CompletableFuture#defaultExecutor()
   * default executor}, so dependent stages never run on the library's thread.
   */
  public CompletableFuture<Void> toFuture() {
    CompletableFuture<Void> future = new CompletableFuture<>();
    MemorySegment h = handle();
    long id = NEXT.getAndIncrement();
    PENDING.put(id, future);
    try {
      Native.check(
          (MemorySegment)
              Native.kiln_event_on_ready.invokeExact(h, READY_STUB, MemorySegment.ofAddress(id)));
    } catch (Throwable t) {
      PENDING.remove(id);
      throw Native.unexpected(t);
    }
    return future;
  }

  private static final Map<Long, CompletableFuture<Void>> PENDING = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT = new AtomicLong(1);
  private static final MemorySegment READY_STUB = readyStub();

  @SuppressWarnings("restricted") // an upcall stub
  private static MemorySegment readyStub() {
    try {
      return Linker.nativeLinker()
          .upcallStub(
              MethodHandles.lookup()
                  .findStatic(
                      Event.class,
                      "ready",
                      MethodType.methodType(void.class, MemorySegment.class, MemorySegment.class)),
              FunctionDescriptor.ofVoid(ADDRESS, ADDRESS),
              Arena.global());
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // called through READY_STUB: kiln_event_callback_fn
  private static void ready(MemorySegment status, MemorySegment userData) {
    try {
      CompletableFuture<Void> future = PENDING.remove(userData.address());
      if (future == null) {
        return;
      }
      // The status is borrowed: read it now, during the call.
      KilnException error = Native.exception(status);
      future
          .defaultExecutor()
          .execute(
              () -> {
                if (error == null) {
                  future.complete(null);
                } else {
                  future.completeExceptionally(error);
                }
              });
    } catch (Throwable t) {
      t.printStackTrace(); // an upcall must not throw
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "Event[closed]" : isReady() ? "Event[ready]" : "Event[pending]";
  }
}
