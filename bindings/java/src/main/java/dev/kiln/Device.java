package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A device of a {@link Client} ({@link Client#devices()}): where buffers live and executables
 * run. The library owns device handles, so a device is not closed; it is usable while its client
 * is open. Equal devices are {@link #equals equal}. Thread-safe.
 */
public final class Device {
  private final Client client;
  private final MemorySegment handle;

  Device(Client client, MemorySegment handle) {
    this.client = client;
    this.handle = handle;
  }

  /** The handle, once the client is known to be open (IllegalStateException otherwise). */
  MemorySegment handle() {
    client.handle();
    return handle;
  }

  /** The client this device belongs to. */
  public Client client() {
    return client;
  }

  /** The device's position in {@link Client#devices()}. */
  public long index() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_LONG);
      Native.check((MemorySegment) Native.kiln_device_index.invokeExact(handle(), out));
      return out.get(JAVA_LONG, 0);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The device's description. */
  public String description() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_device_description.invokeExact(handle(), out));
      return Native.string(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** A buffer of shape f32[dims] on this device holding {@code data} (row-major). */
  public Buffer buffer(float[] data, long... dims) {
    return buffer(ElementType.F32, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape f64[dims] on this device holding {@code data} (row-major). */
  public Buffer buffer(double[] data, long... dims) {
    return buffer(ElementType.F64, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape s32[dims] on this device holding {@code data} (row-major). */
  public Buffer buffer(int[] data, long... dims) {
    return buffer(ElementType.S32, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape s64[dims] on this device holding {@code data} (row-major). */
  public Buffer buffer(long[] data, long... dims) {
    return buffer(ElementType.S64, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape s8[dims] on this device holding {@code data} (row-major). */
  public Buffer buffer(byte[] data, long... dims) {
    return buffer(ElementType.S8, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape pred[dims] on this device holding {@code data} (row-major). */
  public Buffer buffer(boolean[] data, long... dims) {
    return buffer(ElementType.PRED, Client.bytes(data), dims, null);
  }

  /**
   * As {@link Client#buffer(ElementType, MemorySegment, long[], long[])}, on this device: a copy
   * of raw row-major bytes (native byte order, heap or native segment).
   */
  public Buffer buffer(ElementType type, MemorySegment data, long[] dims, long[] minorToMajor) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_device_buffer_from_host.invokeExact(
                  handle(),
                  type.value(),
                  Native.longs(arena, dims),
                  (long) dims.length,
                  Native.longs(arena, minorToMajor),
                  data,
                  data.byteSize(),
                  out));
      return new Buffer(client, out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** {@link #aliasHost(ElementType, MemorySegment, long[], Runnable)} without a release action. */
  public Buffer aliasHost(ElementType type, MemorySegment data, long... dims) {
    return aliasHost(type, data, dims, null);
  }

  /**
   * A buffer over host memory, without copying where the device reads host memory directly
   * ({@code kiln_device_buffer_alias_host}): the "cpu" backend aliases a segment aligned to its
   * element type (as {@code arena.allocate(bytes, 4)} is for f32; a complex type to its parts'
   * width) of any type but PRED, and {@link Buffer#isHostAlias()} is then true; elsewhere
   * (other backends, misaligned data, PRED) the bytes are copied before this returns.
   *
   * <p>{@code data} must be a native segment of the array's row-major bytes (native byte order).
   * The binding keeps it reachable until the library releases it, then runs {@code onRelease}
   * (may be null) once: after the buffer is closed and every execution reading it has ended, or
   * before this returns when the data was copied or the call failed. It may run on any thread
   * and must be quick; throwables from it are printed. Until then the caller must keep the
   * memory allocated (do not close its arena) and unchanged.
   */
  public Buffer aliasHost(ElementType type, MemorySegment data, long[] dims, Runnable onRelease) {
    if (!data.isNative()) {
      throw new IllegalArgumentException("kiln: aliasHost needs a native segment, not a heap one");
    }
    return alias(type, data, data, dims, onRelease);
  }

  /**
   * {@link #aliasHost(ElementType, MemorySegment, long[], Runnable)} over a direct {@link
   * ByteBuffer} (its position to its limit), which the binding keeps reachable until released.
   */
  public Buffer aliasHost(ElementType type, ByteBuffer data, long[] dims, Runnable onRelease) {
    if (!data.isDirect()) {
      throw new IllegalArgumentException("kiln: aliasHost needs a direct ByteBuffer");
    }
    return alias(type, MemorySegment.ofBuffer(data), data, dims, onRelease);
  }

  private Buffer alias(
      ElementType type, MemorySegment data, Object owner, long[] dims, Runnable onRelease) {
    MemorySegment device = handle();
    long id = NEXT_ALIAS.getAndIncrement();
    // Registered first: the library may release (copy) during the call.
    ALIASES.put(id, new Alias(owner, onRelease));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_device_buffer_alias_host.invokeExact(
                  device,
                  type.value(),
                  Native.longs(arena, dims),
                  (long) dims.length,
                  data,
                  data.byteSize(),
                  RELEASE_STUB,
                  MemorySegment.ofAddress(id),
                  out));
      return new Buffer(client, out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * A buffer over CUDA device memory the caller owns (another library's allocation on this
   * device's GPU, in the primary context), read in place, without a copy ({@code
   * kiln_device_buffer_alias_cuda_memory}). This is a device of a "cuda" client; {@code address}
   * (a {@code CUdeviceptr}) holds the array's bytes in row-major order, aligned to the element
   * type (a complex type to its parts' width); it may be 0 only for an array without elements.
   * Work queued on that memory must be complete, or queued on the legacy default stream, which
   * this call synchronises.
   *
   * <p>The caller keeps the memory allocated and unchanged until {@code onRelease} (may be null)
   * runs: exactly once, on any thread, after the buffer is closed and every execution reading it
   * has ended, or before this returns when the call fails (also when it throws because the
   * client is closed). It must be quick; throwables from it are printed. Refusals are {@link
   * KilnException}s with {@link StatusCode#INVALID_ARGUMENT} naming the call: a device of another
   * backend (its memory is not CUDA memory), a misaligned or 0 address, a bad shape.
   */
  public Buffer aliasCudaMemory(ElementType type, long address, long[] dims, Runnable onRelease) {
    long id = NEXT_ALIAS.getAndIncrement();
    // Registered first: the library releases before returning when it fails.
    ALIASES.put(id, new Alias(null, onRelease));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      MemorySegment nativeDims = Native.longs(arena, dims);
      // onRelease runs also when the client is closed: the library releases, refusing NULL.
      return handOver(
          out,
          device ->
              (MemorySegment)
                  Native.kiln_device_buffer_alias_cuda_memory.invokeExact(
                      device,
                      type.value(),
                      nativeDims,
                      (long) dims.length,
                      address,
                      RELEASE_STUB,
                      MemorySegment.ofAddress(id),
                      out));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * Imports the DLPack 1.x {@code DLManagedTensorVersioned} at {@code tensor} (C memory) as a
   * buffer on this device ({@code kiln_device_buffer_from_dlpack_versioned}), taking it over:
   * its deleter runs exactly once, on success and on failure alike (when the buffer and every
   * execution reading it are gone, or before this returns when the data was copied or
   * refused; also when this throws because the client is closed). Host tensors ({@code kDLCPU},
   * {@code kDLCUDAHost}) that are compact row-major are read in place on the "cpu" backend
   * where {@link #aliasHost(ElementType, MemorySegment, long[], Runnable)} would read them in
   * place, else copied. GPU memory ({@code kDLCUDA}) is read in place, as {@link
   * #aliasCudaMemory(ElementType, long, long[], Runnable)} reads it, on a device of a "cuda"
   * client whose CUDA ordinal is the tensor's device id; its producer must have finished writing
   * it, or queued the writes on the legacy default stream, which this call synchronises. The
   * tensor must not change while the buffer lives. INVALID_ARGUMENT, naming the call, for a NULL
   * tensor, a major version other than 1, another device type, a {@code kDLCUDA} tensor given to
   * another backend's device or another GPU's, a dtype Kiln lacks, lanes other than 1, strides
   * that are not row-major, GPU data not aligned to its element type.
   */
  public Buffer bufferFromDlpackVersioned(MemorySegment tensor) {
    return fromDlpack(Native.kiln_device_buffer_from_dlpack_versioned, tensor);
  }

  /** As {@link #bufferFromDlpackVersioned(MemorySegment)}, for a legacy {@code DLManagedTensor}. */
  public Buffer bufferFromDlpack(MemorySegment tensor) {
    return fromDlpack(Native.kiln_device_buffer_from_dlpack, tensor);
  }

  /**
   * Imports a {@link DlpackTensor} (versioned or legacy), which hands its pointer over ({@link
   * DlpackTensor#release()}): as {@link #bufferFromDlpackVersioned(MemorySegment)}.
   */
  public Buffer bufferFromDlpack(DlpackTensor tensor) {
    boolean versioned = tensor.isVersioned();
    MemorySegment pointer = tensor.release();
    return versioned ? bufferFromDlpackVersioned(pointer) : bufferFromDlpack(pointer);
  }

  private Buffer fromDlpack(MethodHandle importer, MemorySegment tensor) {
    MemorySegment pointer = tensor == null ? MemorySegment.NULL : tensor;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      // The tensor is ours also when the client is closed: the library deletes it, refusing NULL.
      return handOver(out, device -> (MemorySegment) importer.invokeExact(device, pointer, out));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** A call that hands something over to the library (a tensor, a release action). */
  @FunctionalInterface
  private interface HandOver {
    MemorySegment call(MemorySegment device) throws Throwable;
  }

  /**
   * The buffer {@code call} makes on this device into {@code out}. On a device of a closed client
   * it calls with a NULL device, so that the library releases what was handed over (refusing the
   * call), and throws the {@link IllegalStateException}.
   */
  private Buffer handOver(MemorySegment out, HandOver call) throws Throwable {
    MemorySegment device;
    try {
      device = handle();
    } catch (IllegalStateException closed) {
      try {
        Native.check(call.call(MemorySegment.NULL));
      } catch (KilnException expected) {
        closed.addSuppressed(expected);
      }
      throw closed;
    }
    Native.check(call.call(device));
    return new Buffer(client, out.get(ADDRESS, 0));
  }

  /** What a host or CUDA alias keeps reachable until the library releases it. */
  private record Alias(Object memory, Runnable onRelease) {}

  private static final Map<Long, Alias> ALIASES = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT_ALIAS = new AtomicLong(1);
  private static final MemorySegment RELEASE_STUB = releaseStub();

  @SuppressWarnings("restricted") // an upcall stub
  private static MemorySegment releaseStub() {
    try {
      return Linker.nativeLinker()
          .upcallStub(
              MethodHandles.lookup()
                  .findStatic(
                      Device.class,
                      "released",
                      MethodType.methodType(void.class, MemorySegment.class)),
              FunctionDescriptor.ofVoid(ADDRESS),
              Arena.global());
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // called through RELEASE_STUB: kiln_host_release_fn
  private static void released(MemorySegment userData) {
    try {
      Alias alias = ALIASES.remove(userData.address());
      if (alias != null && alias.onRelease() != null) {
        alias.onRelease().run();
      }
    } catch (Throwable t) {
      t.printStackTrace(); // an upcall must not throw
    }
  }

  /** Host and CUDA aliases the library has not released yet (for tests). */
  static int pendingAliases() {
    return ALIASES.size();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof Device d && d.handle.address() == handle.address();
  }

  @Override
  public int hashCode() {
    return Long.hashCode(handle.address());
  }

  @Override
  public String toString() {
    return client.isClosed() ? "Device[closed client]" : "Device[" + index() + ": " + description() + "]";
  }
}
