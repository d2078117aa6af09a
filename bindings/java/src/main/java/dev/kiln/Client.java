package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A backend and its devices: compiles computations and holds buffers. Thread-safe.
 *
 * <p>Executables and buffers made from a client belong to it: closing the client first closes
 * those still open.
 */
public final class Client extends NativeHandle {
  private final Set<NativeHandle> children = ConcurrentHashMap.newKeySet();

  private Client(MemorySegment handle) {
    super(handle);
  }

  /** A client of the default backend ("cpu" when the library has it, else "interpreter"). */
  public static Client create() {
    return create(null);
  }

  /**
   * A client of the named backend (null: the default). Unknown names are NOT_FOUND; a backend
   * that cannot run here is UNAVAILABLE.
   */
  public static Client create(String backend) {
    return create(backend, 0);
  }

  /**
   * A client of the named backend (null: the default) presenting {@code numDevices} devices (0:
   * the backend's own count). The host backends ("cpu", "interpreter") split the machine into
   * that many devices (at most 64), sharing its cores and memory; a GPU backend accepts only 0
   * or its physical count (else INVALID_ARGUMENT).
   */
  public static Client create(String backend, int numDevices) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment options =
          new Struct(arena, Struct.CLIENT_OPTIONS)
              .set("backend", Native.cString(arena, backend))
              .set("num_devices", numDevices)
              .segment;
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_client_create.invokeExact(options, out));
      return new Client(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  @Override
  void destroy(MemorySegment h) throws Throwable {
    Native.kiln_client_destroy.invokeExact(h);
  }

  /** Closes the executables and buffers still open, then the client. Idempotent. */
  @Override
  public void close() {
    if (!isClosed()) {
      for (NativeHandle child : children) {
        child.close();
      }
    }
    super.close();
  }

  void adopt(NativeHandle child) {
    children.add(child);
  }

  void release(NativeHandle child) {
    children.remove(child);
  }

  /** The backend's name ("interpreter", "cpu", ...). */
  public String backendName() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_client_backend_name.invokeExact(handle(), out));
      return Native.string(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The client's devices, in order (index i is {@code devices().get(i)}). */
  public List<Device> devices() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment count = arena.allocate(JAVA_LONG);
      Native.check((MemorySegment) Native.kiln_client_device_count.invokeExact(handle(), count));
      List<Device> devices = new ArrayList<>();
      MemorySegment out = Native.outPointer(arena);
      for (long i = 0; i < count.get(JAVA_LONG, 0); i++) {
        Native.check((MemorySegment) Native.kiln_client_device.invokeExact(handle(), i, out));
        devices.add(new Device(this, out.get(ADDRESS, 0)));
      }
      return List.copyOf(devices);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Device {@code index} ({@code kiln_client_device}); OUT_OF_RANGE past the end. */
  public Device device(long index) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_client_device.invokeExact(handle(), index, out));
      return new Device(this, out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Description of device {@code index}; OUT_OF_RANGE past the end. */
  public String deviceDescription(long index) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment) Native.kiln_client_device_description.invokeExact(handle(), index, out));
      return Native.string(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Compiles with the default options. */
  public Executable compile(Computation computation) {
    return compile(computation, CompileOptions.DEFAULT);
  }

  /**
   * Compiles {@code computation} for this client's backend; an op the backend cannot run is
   * UNIMPLEMENTED. The computation may be closed afterwards.
   */
  public Executable compile(Computation computation, CompileOptions options) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment opts =
          new Struct(arena, Struct.COMPILE_OPTIONS)
              .set("optimization_level", options.optimizationLevel())
              .set("num_threads", options.numThreads())
              .set("allow_unsafe_nan_math", options.allowUnsafeNanMath() ? 1 : 0)
              .segment;
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_client_compile.invokeExact(handle(), computation.handle(), opts, out));
      return new Executable(this, out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** A buffer of shape f32[dims] on the first device holding {@code data} (row-major). */
  public Buffer buffer(float[] data, long... dims) {
    return buffer(ElementType.F32, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape f64[dims] holding {@code data} (row-major). */
  public Buffer buffer(double[] data, long... dims) {
    return buffer(ElementType.F64, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape s32[dims] holding {@code data} (row-major). */
  public Buffer buffer(int[] data, long... dims) {
    return buffer(ElementType.S32, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape s64[dims] holding {@code data} (row-major). */
  public Buffer buffer(long[] data, long... dims) {
    return buffer(ElementType.S64, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape s8[dims] holding {@code data} (row-major). */
  public Buffer buffer(byte[] data, long... dims) {
    return buffer(ElementType.S8, MemorySegment.ofArray(data), dims, null);
  }

  /** A buffer of shape pred[dims] holding {@code data} (row-major). */
  public Buffer buffer(boolean[] data, long... dims) {
    return buffer(ElementType.PRED, bytes(data), dims, null);
  }

  /**
   * A buffer of any array type from raw row-major bytes in native byte order (a heap or native
   * segment). {@code minorToMajor} sets the device layout (null: row-major). The library
   * checks that the byte size matches the shape (else INVALID_ARGUMENT).
   */
  public Buffer buffer(ElementType type, MemorySegment data, long[] dims, long[] minorToMajor) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_client_buffer_from_host.invokeExact(
                  handle(),
                  type.value(),
                  Native.longs(arena, dims),
                  (long) dims.length,
                  Native.longs(arena, minorToMajor),
                  data,
                  data.byteSize(),
                  out));
      return new Buffer(this, out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Reads a NumPy {@code .npy} file into a new buffer. */
  public Buffer readNpy(Path path) {
    return readNpy(path, null);
  }

  /**
   * Reads a NumPy {@code .npy} file into a new buffer; {@code expectedType} (may be null) is
   * only needed to read a two-byte void array as {@link ElementType#BF16}.
   */
  public Buffer readNpy(Path path, ElementType expectedType) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_client_buffer_from_npy_file.invokeExact(
                  handle(),
                  arena.allocateFrom(path.toString()),
                  expectedType == null ? 0 : expectedType.value(),
                  out));
      return new Buffer(this, out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * Queues an array (raw row-major bytes, native byte order) for the next {@code infeed} op
   * run by this client's executables.
   */
  public void transferToInfeed(Shape shape, MemorySegment data) {
    try (Arena arena = Arena.ofConfined()) {
      Native.check(
          (MemorySegment)
              Native.kiln_client_transfer_to_infeed.invokeExact(
                  handle(),
                  shape.elementType().value(),
                  Native.longs(arena, shape.dims()),
                  (long) shape.rank(),
                  data,
                  data.byteSize()));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  static MemorySegment bytes(boolean[] data) {
    MemorySegment s = MemorySegment.ofArray(new byte[data.length]);
    for (int i = 0; i < data.length; i++) {
      s.set(JAVA_BYTE, i, (byte) (data[i] ? 1 : 0));
    }
    return s;
  }
}
