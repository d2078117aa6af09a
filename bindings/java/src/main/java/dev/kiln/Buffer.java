package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Optional;

/**
 * An immutable array in a device's memory, owned by the {@link Client} that made it. Reads are
 * thread-safe.
 */
public final class Buffer extends NativeHandle {
  private final Client client;

  Buffer(Client client, MemorySegment handle) {
    super(handle);
    this.client = client;
    client.adopt(this);
  }

  @Override
  void destroy(MemorySegment h) throws Throwable {
    Native.kiln_buffer_destroy.invokeExact(h);
  }

  @Override
  void closed() {
    client.release(this);
  }

  /** The element type. */
  public ElementType elementType() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      Native.check((MemorySegment) Native.kiln_buffer_element_type.invokeExact(handle(), out));
      return ElementType.of(out.get(JAVA_INT, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The dimensions. */
  public long[] dimensions() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment rank = arena.allocate(JAVA_LONG);
      Native.check((MemorySegment) Native.kiln_buffer_rank.invokeExact(handle(), rank));
      long n = rank.get(JAVA_LONG, 0);
      MemorySegment dims = arena.allocate(JAVA_LONG, Math.max(1, n));
      Native.check((MemorySegment) Native.kiln_buffer_dimensions.invokeExact(handle(), dims, n));
      return n == 0 ? new long[0] : dims.asSlice(0, n * 8).toArray(JAVA_LONG);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The device layout's minor-to-major dimension order. */
  public long[] minorToMajor() {
    try (Arena arena = Arena.ofConfined()) {
      long n = dimensions().length;
      MemorySegment out = arena.allocate(JAVA_LONG, Math.max(1, n));
      Native.check((MemorySegment) Native.kiln_buffer_minor_to_major.invokeExact(handle(), out, n));
      return n == 0 ? new long[0] : out.asSlice(0, n * 8).toArray(JAVA_LONG);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The element type and dimensions. */
  public Shape shape() {
    return Shape.of(elementType(), dimensions());
  }

  /** Bytes of the row-major host copy. */
  public long byteSize() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_LONG);
      Native.check((MemorySegment) Native.kiln_buffer_byte_size.invokeExact(handle(), out));
      return out.get(JAVA_LONG, 0);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * Copies the buffer, row-major in native byte order, into {@code destination} (a heap or
   * native segment of exactly {@link #byteSize()} bytes, else INVALID_ARGUMENT). Waits until
   * the buffer is filled; when the execution that was to fill it failed, throws that error.
   */
  public void copyTo(MemorySegment destination) {
    // kiln_buffer_to_host may read into a heap array only as a critical downcall, which must
    // not block: wait for the data first through the (non-critical) ready event.
    try (Event ready = readyEvent()) {
      ready.await();
    }
    try {
      Native.check(
          (MemorySegment)
              Native.kiln_buffer_to_host.invokeExact(
                  handle(), destination, destination.byteSize()));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The device the buffer lives on. */
  public Device device() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_buffer_device.invokeExact(handle(), out));
      return new Device(client, out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * A copy of this buffer (once it is filled) on {@code device}, a device of the same client
   * (else INVALID_ARGUMENT). The caller owns the copy.
   */
  public Buffer copyTo(Device device) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_buffer_copy_to_device.invokeExact(handle(), device.handle(), out));
      return new Buffer(device.client(), out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * Whether the buffer reads host memory given to {@link Device#aliasHost(ElementType,
   * MemorySegment, long[], Runnable)} (or a DLPack tensor given to {@link
   * Device#bufferFromDlpackVersioned(MemorySegment)}) in place (false when it was copied).
   */
  public boolean isHostAlias() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      Native.check((MemorySegment) Native.kiln_buffer_is_host_alias.invokeExact(handle(), out));
      return out.get(JAVA_INT, 0) != 0;
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * Where the buffer (once it is filled; an execution's failure is thrown) lies in GPU memory
   * ({@code kiln_buffer_cuda_memory}); empty for a buffer of a backend other than "cuda". The
   * memory stays valid while the buffer is open; never write through it (buffers are immutable).
   */
  public Optional<CudaMemory> cudaMemory() {
    MemorySegment buffer = handle();
    if (!client.backendName().equals("cuda")) {
      return Optional.empty();
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment ordinal = arena.allocate(JAVA_INT);
      MemorySegment address = arena.allocate(JAVA_LONG);
      Native.check((MemorySegment) Native.kiln_buffer_cuda_memory.invokeExact(buffer, ordinal, address));
      return Optional.of(new CudaMemory(ordinal.get(JAVA_INT, 0), address.get(JAVA_LONG, 0)));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * Exports the buffer (once it is filled; an execution's failure is thrown) as a DLPack 1.x
   * {@code DLManagedTensorVersioned} ({@code kiln_buffer_to_dlpack_versioned}). On the host
   * backends ("cpu", "interpreter") it is the buffer's own memory, without a copy; on "cuda" the
   * buffer's own GPU memory, without a copy ({@link DlpackTensor#DEVICE_CUDA}, device id the GPU's
   * CUDA ordinal, the data complete on the GPU: see {@link #cudaMemory()}); elsewhere a host copy,
   * flagged {@link DlpackTensor#FLAG_IS_COPIED}. {@link DlpackTensor#FLAG_READ_ONLY}
   * is always set: never write through it. The tensor keeps the memory alive after this buffer
   * and its client are closed, until it is closed (its deleter runs) or {@link
   * DlpackTensor#release() released} to a consumer that deletes it.
   */
  public DlpackTensor toDlpackVersioned() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_buffer_to_dlpack_versioned.invokeExact(handle(), out));
      return DlpackTensor.ofVersioned(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * As {@link #toDlpackVersioned()}, as a legacy (pre-1.0) {@code DLManagedTensor}, which has no
   * flags, for consumers that know only that struct.
   */
  public DlpackTensor toDlpack() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_buffer_to_dlpack.invokeExact(handle(), out));
      return DlpackTensor.ofLegacy(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * An event that becomes ready when the buffer holds its data (at once for one made from host
   * memory), with the error of the execution that was to fill it if that failed. The caller
   * closes it.
   */
  public Event readyEvent() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_buffer_ready_event.invokeExact(handle(), out));
      return new Event(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  private int elements(ElementType expected, int width) {
    ElementType actual = elementType();
    if (actual != expected) {
      throw new IllegalStateException(
          "kiln: the buffer holds " + actual.hloName() + ", not " + expected.hloName());
    }
    return Math.toIntExact(byteSize() / width);
  }

  /** The contents of an f32 buffer, row-major. */
  public float[] toFloatArray() {
    float[] out = new float[elements(ElementType.F32, 4)];
    copyTo(MemorySegment.ofArray(out));
    return out;
  }

  /** The contents of an f64 buffer, row-major. */
  public double[] toDoubleArray() {
    double[] out = new double[elements(ElementType.F64, 8)];
    copyTo(MemorySegment.ofArray(out));
    return out;
  }

  /** The contents of an s32 buffer, row-major. */
  public int[] toIntArray() {
    int[] out = new int[elements(ElementType.S32, 4)];
    copyTo(MemorySegment.ofArray(out));
    return out;
  }

  /** The contents of an s64 buffer, row-major. */
  public long[] toLongArray() {
    long[] out = new long[elements(ElementType.S64, 8)];
    copyTo(MemorySegment.ofArray(out));
    return out;
  }

  /** The contents of an s8 buffer, row-major. */
  public byte[] toByteArray() {
    byte[] out = new byte[elements(ElementType.S8, 1)];
    copyTo(MemorySegment.ofArray(out));
    return out;
  }

  /** The contents of a pred buffer, row-major. */
  public boolean[] toBooleanArray() {
    byte[] bytes = new byte[elements(ElementType.PRED, 1)];
    copyTo(MemorySegment.ofArray(bytes));
    boolean[] out = new boolean[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      out[i] = bytes[i] != 0;
    }
    return out;
  }

  /** The raw row-major bytes (native byte order) of a buffer of any array type. */
  public byte[] toBytes() {
    byte[] out = new byte[Math.toIntExact(byteSize())];
    copyTo(MemorySegment.ofArray(out));
    return out;
  }

  /** Writes the buffer to {@code path} as a NumPy {@code .npy} file. */
  public void writeNpy(Path path) {
    try (Arena arena = Arena.ofConfined()) {
      Native.check(
          (MemorySegment)
              Native.kiln_buffer_to_npy_file.invokeExact(
                  handle(), arena.allocateFrom(path.toString())));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "Buffer[closed]" : "Buffer[" + shape() + "]";
  }
}
