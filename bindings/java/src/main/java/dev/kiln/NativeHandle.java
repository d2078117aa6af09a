package dev.kiln;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicReference;

/** An owned libkiln handle: freed once by {@link #close()}, which may be called again. */
abstract class NativeHandle implements AutoCloseable {
  private final AtomicReference<MemorySegment> handle;

  NativeHandle(MemorySegment handle) {
    this.handle = new AtomicReference<>(handle);
  }

  /** The live handle; IllegalStateException once closed. */
  final MemorySegment handle() {
    MemorySegment h = handle.get();
    if (h == null) {
      throw new IllegalStateException("kiln: " + getClass().getSimpleName() + " is closed");
    }
    return h;
  }

  /** Whether {@link #close()} was called. */
  public final boolean isClosed() {
    return handle.get() == null;
  }

  /** Frees the native object; later calls do nothing. */
  @Override
  public void close() {
    MemorySegment h = handle.getAndSet(null);
    if (h != null) {
      try {
        destroy(h);
      } catch (Throwable t) {
        throw Native.unexpected(t);
      }
      closed();
    }
  }

  /** Calls the C destroy function. */
  abstract void destroy(MemorySegment h) throws Throwable;

  /** Runs after destroy (e.g. to leave the owner's list). */
  void closed() {}
}
