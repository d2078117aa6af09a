package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A DLPack tensor in C memory, owned by this object: a {@code DLManagedTensorVersioned} (DLPack
 * 1.x) or a legacy {@code DLManagedTensor}, as {@link Buffer#toDlpackVersioned()} and {@link
 * Buffer#toDlpack()} hand them out. {@link #close()} calls the tensor's deleter (once; later
 * calls do nothing); {@link #release()} hands the pointer on to a consumer that will. Until
 * then the accessors read the struct; {@link #data()} is the tensor's memory.
 *
 * <p>The layouts of DLPack 1.x's structs are public so that callers can build tensors of their
 * own for {@link Device#bufferFromDlpackVersioned(MemorySegment)}. Not thread-safe.
 */
@SuppressWarnings("restricted") // reads C structs at addresses the library or the caller gives
public final class DlpackTensor implements AutoCloseable {
  /** {@code DLPACK_FLAG_BITMASK_READ_ONLY}: the consumer must not write through the tensor. */
  public static final long FLAG_READ_ONLY = 1L;

  /** {@code DLPACK_FLAG_BITMASK_IS_COPIED}: the data is a copy of the producer's. */
  public static final long FLAG_IS_COPIED = 1L << 1;

  /** {@code kDLCPU}. */
  public static final int DEVICE_CPU = 1;

  /** {@code kDLCUDA}. */
  public static final int DEVICE_CUDA = 2;

  /** {@code kDLCUDAHost}. */
  public static final int DEVICE_CUDA_HOST = 3;

  /** {@code kDLInt}. */
  public static final int CODE_INT = 0;

  /** {@code kDLUInt}. */
  public static final int CODE_UINT = 1;

  /** {@code kDLFloat}. */
  public static final int CODE_FLOAT = 2;

  /** {@code kDLBfloat}. */
  public static final int CODE_BFLOAT = 4;

  /** {@code kDLComplex}. */
  public static final int CODE_COMPLEX = 5;

  /** {@code kDLBool}. */
  public static final int CODE_BOOL = 6;

  /** {@code DLDevice}. */
  public static final StructLayout DEVICE =
      MemoryLayout.structLayout(JAVA_INT.withName("device_type"), JAVA_INT.withName("device_id"));

  /** {@code DLDataType}. */
  public static final StructLayout DATA_TYPE =
      MemoryLayout.structLayout(
          JAVA_BYTE.withName("code"), JAVA_BYTE.withName("bits"), JAVA_SHORT.withName("lanes"));

  /** {@code DLTensor}. */
  public static final StructLayout TENSOR =
      MemoryLayout.structLayout(
          ADDRESS.withName("data"),
          DEVICE.withName("device"),
          JAVA_INT.withName("ndim"),
          DATA_TYPE.withName("dtype"),
          ADDRESS.withName("shape"),
          ADDRESS.withName("strides"),
          JAVA_LONG.withName("byte_offset"));

  /** {@code DLPackVersion}. */
  public static final StructLayout VERSION =
      MemoryLayout.structLayout(JAVA_INT.withName("major"), JAVA_INT.withName("minor"));

  /** {@code DLManagedTensorVersioned} (DLPack 1.x). */
  public static final StructLayout MANAGED_TENSOR_VERSIONED =
      MemoryLayout.structLayout(
          VERSION.withName("version"),
          ADDRESS.withName("manager_ctx"),
          ADDRESS.withName("deleter"),
          JAVA_LONG.withName("flags"),
          TENSOR.withName("dl_tensor"));

  /** {@code DLManagedTensor} (DLPack before 1.0). */
  public static final StructLayout MANAGED_TENSOR =
      MemoryLayout.structLayout(
          TENSOR.withName("dl_tensor"),
          ADDRESS.withName("manager_ctx"),
          ADDRESS.withName("deleter"));

  private static long offset(StructLayout layout, String... names) {
    PathElement[] path = new PathElement[names.length];
    for (int i = 0; i < names.length; i++) {
      path[i] = PathElement.groupElement(names[i]);
    }
    return layout.byteOffset(path);
  }

  private static final long DATA = offset(TENSOR, "data");
  private static final long DEVICE_TYPE = offset(TENSOR, "device", "device_type");
  private static final long DEVICE_ID = offset(TENSOR, "device", "device_id");
  private static final long NDIM = offset(TENSOR, "ndim");
  private static final long CODE = offset(TENSOR, "dtype", "code");
  private static final long BITS = offset(TENSOR, "dtype", "bits");
  private static final long LANES = offset(TENSOR, "dtype", "lanes");
  private static final long SHAPE = offset(TENSOR, "shape");
  private static final long STRIDES = offset(TENSOR, "strides");
  private static final long BYTE_OFFSET = offset(TENSOR, "byte_offset");

  /** Calls a C function {@code void (*)(void*)}: the address first, then the argument. */
  private static final MethodHandle CALL_DELETER =
      Linker.nativeLinker().downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

  private final AtomicReference<MemorySegment> pointer;
  private final boolean versioned;

  private DlpackTensor(MemorySegment pointer, boolean versioned) {
    if (pointer == null || pointer.address() == 0) {
      throw new IllegalArgumentException("kiln: a DLPack tensor pointer is NULL");
    }
    StructLayout layout = versioned ? MANAGED_TENSOR_VERSIONED : MANAGED_TENSOR;
    this.pointer =
        new AtomicReference<>(MemorySegment.ofAddress(pointer.address()).reinterpret(layout.byteSize()));
    this.versioned = versioned;
  }

  /**
   * Takes over the {@code DLManagedTensorVersioned} at {@code pointer} (C memory, DLPack 1.x):
   * {@link #close()} will call its deleter. The caller must own it.
   */
  public static DlpackTensor ofVersioned(MemorySegment pointer) {
    return new DlpackTensor(pointer, true);
  }

  /** As {@link #ofVersioned(MemorySegment)}, for a legacy {@code DLManagedTensor}. */
  public static DlpackTensor ofLegacy(MemorySegment pointer) {
    return new DlpackTensor(pointer, false);
  }

  /** Whether this is a {@code DLManagedTensorVersioned} (else a legacy {@code DLManagedTensor}). */
  public boolean isVersioned() {
    return versioned;
  }

  /**
   * The address of the managed tensor struct (sized to its layout); IllegalStateException once
   * closed or released.
   */
  public MemorySegment pointer() {
    MemorySegment p = pointer.get();
    if (p == null) {
      throw new IllegalStateException("kiln: the DLPack tensor was deleted or released");
    }
    return p;
  }

  private MemorySegment tensor() {
    long at = versioned ? offset(MANAGED_TENSOR_VERSIONED, "dl_tensor") : 0;
    return pointer().asSlice(at, TENSOR.byteSize());
  }

  /** The DLPack major version (0 for a legacy tensor, which has none). */
  public int versionMajor() {
    return versioned ? pointer().get(JAVA_INT, 0) : 0;
  }

  /** The DLPack minor version (0 for a legacy tensor). */
  public int versionMinor() {
    return versioned ? pointer().get(JAVA_INT, 4) : 0;
  }

  /** The flags ({@link #FLAG_READ_ONLY}, {@link #FLAG_IS_COPIED}; 0 for a legacy tensor). */
  public long flags() {
    return versioned ? pointer().get(JAVA_LONG, offset(MANAGED_TENSOR_VERSIONED, "flags")) : 0;
  }

  /** Whether {@link #FLAG_READ_ONLY} is set: never write through {@link #data()} then. */
  public boolean isReadOnly() {
    return (flags() & FLAG_READ_ONLY) != 0;
  }

  /** Whether {@link #FLAG_IS_COPIED} is set. */
  public boolean isCopied() {
    return (flags() & FLAG_IS_COPIED) != 0;
  }

  /** {@code DLDevice.device_type} ({@link #DEVICE_CPU}, ...). */
  public int deviceType() {
    return tensor().get(JAVA_INT, DEVICE_TYPE);
  }

  /** {@code DLDevice.device_id}. */
  public int deviceId() {
    return tensor().get(JAVA_INT, DEVICE_ID);
  }

  /** The dtype code ({@link #CODE_FLOAT}, ...). */
  public int dtypeCode() {
    return Byte.toUnsignedInt(tensor().get(JAVA_BYTE, CODE));
  }

  /** The dtype's bits per lane. */
  public int dtypeBits() {
    return Byte.toUnsignedInt(tensor().get(JAVA_BYTE, BITS));
  }

  /** The dtype's lanes. */
  public int dtypeLanes() {
    return Short.toUnsignedInt(tensor().get(JAVA_SHORT, LANES));
  }

  /** The dimensions. */
  public long[] shape() {
    MemorySegment t = tensor();
    int n = t.get(JAVA_INT, NDIM);
    MemorySegment shape = t.get(ADDRESS, SHAPE);
    return n <= 0 || shape.address() == 0
        ? new long[0]
        : shape.reinterpret(n * 8L).toArray(JAVA_LONG);
  }

  /** The strides in elements, or null when the tensor has none (compact row-major). */
  public long[] strides() {
    MemorySegment t = tensor();
    int n = t.get(JAVA_INT, NDIM);
    MemorySegment strides = t.get(ADDRESS, STRIDES);
    if (strides.address() == 0) {
      return null;
    }
    return n <= 0 ? new long[0] : strides.reinterpret(n * 8L).toArray(JAVA_LONG);
  }

  /** {@code DLTensor.byte_offset}: where the array starts past {@code data}. */
  public long byteOffset() {
    return tensor().get(JAVA_LONG, BYTE_OFFSET);
  }

  /** Bytes of the compact array the shape and dtype describe. */
  public long byteSize() {
    long elements = 1;
    for (long d : shape()) {
      elements = Math.multiplyExact(elements, d);
    }
    long bytesPerElement = ((long) dtypeBits() * dtypeLanes() + 7) / 8;
    return Math.multiplyExact(elements, bytesPerElement);
  }

  /**
   * The array's memory ({@code data + byte_offset}, {@link #byteSize()} bytes, compact row-major
   * when {@link #strides()} says so), valid until the tensor is deleted. Read-only use when
   * {@link #isReadOnly()}.
   */
  public MemorySegment data() {
    MemorySegment data = tensor().get(ADDRESS, DATA);
    if (data.address() == 0) {
      return MemorySegment.NULL;
    }
    return MemorySegment.ofAddress(data.address() + byteOffset()).reinterpret(byteSize());
  }

  /**
   * Hands the tensor on: returns its pointer, which the receiver (a consumer that calls the
   * deleter, such as {@link Device#bufferFromDlpackVersioned(MemorySegment)}) now owns; {@link
   * #close()} then does nothing.
   */
  public MemorySegment release() {
    MemorySegment p = pointer.getAndSet(null);
    if (p == null) {
      throw new IllegalStateException("kiln: the DLPack tensor was deleted or released");
    }
    return p;
  }

  /** Calls the tensor's deleter (if it has one), once; later calls, or after release, do nothing. */
  @Override
  public void close() {
    MemorySegment p = pointer.getAndSet(null);
    if (p == null) {
      return;
    }
    long at = offset(versioned ? MANAGED_TENSOR_VERSIONED : MANAGED_TENSOR, "deleter");
    MemorySegment deleter = p.get(ADDRESS, at);
    if (deleter.address() == 0) {
      return;
    }
    try {
      CALL_DELETER.invokeExact(deleter, p);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  @Override
  public String toString() {
    if (pointer.get() == null) {
      return "DlpackTensor[deleted]";
    }
    return "DlpackTensor["
        + (versioned ? "v" + versionMajor() + "." + versionMinor() : "legacy")
        + ", code "
        + dtypeCode()
        + " bits "
        + dtypeBits()
        + ", shape "
        + java.util.Arrays.toString(shape())
        + ", flags "
        + flags()
        + "]";
  }
}
