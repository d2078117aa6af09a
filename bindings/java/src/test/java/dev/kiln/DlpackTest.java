package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** DLPack export and import: zero-copy on the host, and the deleter contract. */
@SuppressWarnings("restricted") // reads tensors the deleter upcall is given
class DlpackTest {
  static final float[] SIX = {0, 10, 20, 30, 40, 50};

  // --- foreign tensors: built in C memory, with a deleter (an upcall stub) that counts ----------

  /** Deletions per manager_ctx (a Foreign's id). */
  static final Map<Long, AtomicInteger> DELETIONS = new ConcurrentHashMap<>();

  static final AtomicLong NEXT_ID = new AtomicLong(1);

  static long offset(StructLayout layout, String... names) {
    PathElement[] path = new PathElement[names.length];
    for (int i = 0; i < names.length; i++) {
      path[i] = PathElement.groupElement(names[i]);
    }
    return layout.byteOffset(path);
  }

  static final StructLayout V = DlpackTensor.MANAGED_TENSOR_VERSIONED;
  static final StructLayout L = DlpackTensor.MANAGED_TENSOR;
  static final long V_TENSOR = offset(V, "dl_tensor");
  static final long L_TENSOR = offset(L, "dl_tensor");

  static final MemorySegment VERSIONED_DELETER = stub("deletedVersioned");
  static final MemorySegment LEGACY_DELETER = stub("deletedLegacy");

  static MemorySegment stub(String method) {
    try {
      return Linker.nativeLinker()
          .upcallStub(
              MethodHandles.lookup()
                  .findStatic(
                      DlpackTest.class, method, MethodType.methodType(void.class, MemorySegment.class)),
              FunctionDescriptor.ofVoid(ADDRESS),
              Arena.global());
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  static void count(MemorySegment managerCtx) {
    DELETIONS.computeIfAbsent(managerCtx.address(), k -> new AtomicInteger()).incrementAndGet();
  }

  @SuppressWarnings("unused") // the versioned tensors' deleter
  static void deletedVersioned(MemorySegment self) {
    count(self.reinterpret(V.byteSize()).get(ADDRESS, offset(V, "manager_ctx")));
  }

  @SuppressWarnings("unused") // the legacy tensors' deleter
  static void deletedLegacy(MemorySegment self) {
    count(self.reinterpret(L.byteSize()).get(ADDRESS, offset(L, "manager_ctx")));
  }

  /**
   * An f32 tensor over a copy of {@code values}, {@code byteOffset} bytes past a 64-byte
   * boundary, row-major with strides, as a versioned and a legacy managed tensor.
   */
  static final class Foreign {
    final long id = NEXT_ID.getAndIncrement();
    final MemorySegment data;
    final MemorySegment shape;
    final MemorySegment strides;
    final MemorySegment versioned;
    final MemorySegment legacy;

    Foreign(Arena arena, float[] values, long byteOffset, long... dims) {
      MemorySegment block = arena.allocate(values.length * 4L + 64, 64);
      data = block.asSlice(byteOffset, values.length * 4L);
      for (int i = 0; i < values.length; i++) {
        data.set(JAVA_FLOAT_UNALIGNED, i * 4L, values[i]);
      }
      shape = arena.allocateFrom(JAVA_LONG, dims);
      long[] rowMajor = new long[dims.length];
      long stride = 1;
      for (int i = dims.length - 1; i >= 0; i--) {
        rowMajor[i] = stride;
        stride *= dims[i];
      }
      strides = arena.allocateFrom(JAVA_LONG, rowMajor);
      versioned = arena.allocate(V);
      versioned.set(JAVA_INT, offset(V, "version", "major"), 1);
      versioned.set(JAVA_INT, offset(V, "version", "minor"), 1);
      versioned.set(ADDRESS, offset(V, "manager_ctx"), MemorySegment.ofAddress(id));
      versioned.set(ADDRESS, offset(V, "deleter"), VERSIONED_DELETER);
      fill(versioned.asSlice(V_TENSOR, DlpackTensor.TENSOR.byteSize()), dims.length);
      legacy = arena.allocate(L);
      legacy.set(ADDRESS, offset(L, "manager_ctx"), MemorySegment.ofAddress(id));
      legacy.set(ADDRESS, offset(L, "deleter"), LEGACY_DELETER);
      fill(legacy.asSlice(L_TENSOR, DlpackTensor.TENSOR.byteSize()), dims.length);
      DELETIONS.put(id, new AtomicInteger());
    }

    private void fill(MemorySegment t, int ndim) {
      StructLayout T = DlpackTensor.TENSOR;
      t.set(ADDRESS, offset(T, "data"), data);
      t.set(JAVA_INT, offset(T, "device", "device_type"), DlpackTensor.DEVICE_CPU);
      t.set(JAVA_INT, offset(T, "device", "device_id"), 0);
      t.set(JAVA_INT, offset(T, "ndim"), ndim);
      t.set(JAVA_BYTE, offset(T, "dtype", "code"), (byte) DlpackTensor.CODE_FLOAT);
      t.set(JAVA_BYTE, offset(T, "dtype", "bits"), (byte) 32);
      t.set(JAVA_SHORT, offset(T, "dtype", "lanes"), (short) 1);
      t.set(ADDRESS, offset(T, "shape"), shape);
      t.set(ADDRESS, offset(T, "strides"), strides);
      t.set(JAVA_LONG, offset(T, "byte_offset"), 0L);
    }

    /** Edits both tensors' DLTensor. */
    void editTensors(Consumer<MemorySegment> edit) {
      edit.accept(versioned.asSlice(V_TENSOR, DlpackTensor.TENSOR.byteSize()));
      edit.accept(legacy.asSlice(L_TENSOR, DlpackTensor.TENSOR.byteSize()));
    }

    int deletions() {
      return DELETIONS.get(id).get();
    }
  }

  static final long STRIDES = offset(DlpackTensor.TENSOR, "strides");

  // --- export -------------------------------------------------------------------------------

  @Test
  void exportIsTheBuffersOwnMemoryAndOutlivesTheBufferAndClient() {
    AtomicInteger released = new AtomicInteger();
    try (Arena arena = Arena.ofShared()) {
      MemorySegment host = DeviceTest.aligned(arena, SIX);
      Client client = Client.create("cpu");
      Buffer buffer =
          client.device(0).aliasHost(ElementType.F32, host, new long[] {2, 3}, released::incrementAndGet);
      assertTrue(buffer.isHostAlias());
      DlpackTensor versioned = buffer.toDlpackVersioned();
      DlpackTensor legacy = buffer.toDlpack();
      buffer.close();
      client.close();
      assertEquals(0, released.get(), "the tensors keep the aliased memory");

      assertEquals(host.address(), versioned.data().address(), "the buffer's own memory");
      assertTrue(versioned.isReadOnly());
      assertFalse(versioned.isCopied());
      assertEquals(1, versioned.versionMajor());
      assertEquals(DlpackTensor.DEVICE_CPU, versioned.deviceType());
      assertEquals(0, versioned.deviceId());
      assertEquals(DlpackTensor.CODE_FLOAT, versioned.dtypeCode());
      assertEquals(32, versioned.dtypeBits());
      assertEquals(1, versioned.dtypeLanes());
      assertArrayEquals(new long[] {2, 3}, versioned.shape());
      assertArrayEquals(new long[] {3, 1}, versioned.strides());
      assertEquals(0, versioned.byteOffset());
      assertEquals(24, versioned.byteSize());
      assertArrayEquals(SIX, versioned.data().toArray(JAVA_FLOAT));

      assertFalse(legacy.isVersioned());
      assertEquals(0, legacy.flags());
      assertEquals(host.address(), legacy.data().address());
      assertArrayEquals(new long[] {2, 3}, legacy.shape());

      versioned.close();
      versioned.close(); // once only
      assertThrows(IllegalStateException.class, versioned::shape);
      assertEquals(0, released.get(), "the legacy tensor still holds the memory");
      assertArrayEquals(SIX, legacy.data().toArray(JAVA_FLOAT));
      legacy.close();
      assertEquals(1, released.get(), "deleting the last tensor releases the host memory");
    }
  }

  @Test
  void everyBackendExportsHostMemoryOrAFlaggedCopy() {
    for (String backend : Kiln.backends()) {
      Client client;
      try {
        client = Client.create(backend);
      } catch (KilnException e) {
        System.out.println("DlpackTest: skipping backend " + backend + ": " + e.getMessage());
        continue;
      }
      DlpackTensor versioned;
      DlpackTensor legacy;
      try (client;
          Buffer b = client.buffer(SIX, 3, 2)) {
        versioned = b.toDlpackVersioned();
        legacy = b.toDlpack();
      }
      try (versioned;
          legacy) {
        boolean host = backend.equals("cpu") || backend.equals("interpreter");
        assertTrue(versioned.isReadOnly(), backend);
        if (backend.equals("cuda")) {
          // Its own GPU memory, not readable here (CudaMemoryTest reads the fake driver's).
          assertFalse(versioned.isCopied(), backend);
          assertEquals(DlpackTensor.DEVICE_CUDA, versioned.deviceType(), backend);
          assertEquals(DlpackTensor.DEVICE_CUDA, legacy.deviceType(), backend);
          continue;
        }
        assertEquals(!host, versioned.isCopied(), backend);
        if (host) {
          assertEquals(versioned.data().address(), legacy.data().address(), backend);
        }
        assertArrayEquals(new long[] {3, 2}, versioned.shape(), backend);
        assertArrayEquals(SIX, versioned.data().toArray(JAVA_FLOAT), backend);
        assertArrayEquals(SIX, legacy.data().toArray(JAVA_FLOAT), backend);
      }
    }
  }

  // --- import -------------------------------------------------------------------------------

  @Test
  void importOnCpuIsZeroCopyAndDeletesOnceAfterTheLastUser() {
    try (Client client = Client.create("cpu");
        Executable exe = DeviceTest.addOne(client);
        Arena arena = Arena.ofShared()) {
      Foreign f = new Foreign(arena, new float[] {1, 2, 3, 4}, 0, 4);
      Buffer b = client.device(0).bufferFromDlpackVersioned(f.versioned);
      assertTrue(b.isHostAlias());
      assertEquals(0, f.deletions());
      assertArrayEquals(new float[] {1, 2, 3, 4}, b.toFloatArray());
      DlpackTensor back = b.toDlpackVersioned();
      assertEquals(f.data.address(), back.data().address(), "a round trip gives the same pointer");
      try (Buffer out = exe.execute(b).get(0)) {
        assertArrayEquals(new float[] {2, 3, 4, 5}, out.toFloatArray());
      }
      b.close();
      assertEquals(0, f.deletions(), "the export still reads the memory");
      back.close();
      assertEquals(1, f.deletions());

      // NULL strides mean row-major; deleted when the buffer closes.
      Foreign g = new Foreign(arena, SIX, 0, 2, 3);
      g.editTensors(t -> t.set(ADDRESS, STRIDES, MemorySegment.NULL));
      try (Buffer c = client.device(0).bufferFromDlpackVersioned(g.versioned)) {
        assertArrayEquals(SIX, c.toFloatArray());
        assertEquals(0, g.deletions());
      }
      assertEquals(1, g.deletions());
    }
  }

  @Test
  void importReadsElementAlignedTensorsInPlaceAndCopiesMisalignedOnes() {
    try (Client client = Client.create("cpu");
        Arena arena = Arena.ofShared()) {
      Foreign aligned = new Foreign(arena, SIX, 4, 6); // f32-aligned, not 64-byte aligned
      try (Buffer b = client.device(0).bufferFromDlpackVersioned(aligned.versioned);
          DlpackTensor back = b.toDlpackVersioned()) {
        assertTrue(b.isHostAlias());
        assertEquals(aligned.data.address(), back.data().address());
        assertEquals(0, aligned.deletions());
      }
      assertEquals(1, aligned.deletions());

      Foreign misaligned = new Foreign(arena, SIX, 1, 6);
      try (Buffer b = client.device(0).bufferFromDlpackVersioned(misaligned.versioned);
          DlpackTensor back = b.toDlpackVersioned()) {
        assertEquals(1, misaligned.deletions(), "copied, so deleted before returning");
        assertFalse(b.isHostAlias());
        assertNotEquals(misaligned.data.address(), back.data().address());
        assertArrayEquals(SIX, b.toFloatArray());
      }
      assertEquals(1, misaligned.deletions());
    }
  }

  @Test
  void legacyTensorsImportAndExport() {
    try (Client client = Client.create("cpu");
        Arena arena = Arena.ofShared()) {
      Foreign f = new Foreign(arena, SIX, 0, 2, 3);
      try (Buffer b = client.device(0).bufferFromDlpack(f.legacy);
          DlpackTensor back = b.toDlpack()) {
        assertTrue(b.isHostAlias());
        assertArrayEquals(SIX, b.toFloatArray());
        assertEquals(f.data.address(), back.data().address());
        assertArrayEquals(new long[] {2, 3}, back.shape());
      }
      assertEquals(1, f.deletions());

      // A DlpackTensor hands its pointer on: the import owns it, close() does nothing.
      Buffer source = client.buffer(SIX, 6);
      DlpackTensor exported = source.toDlpack();
      try (Buffer copy = client.device(0).bufferFromDlpack(exported)) {
        assertArrayEquals(SIX, copy.toFloatArray());
        assertThrows(IllegalStateException.class, exported::pointer);
        exported.close();
      }
      source.close();

      Foreign g = new Foreign(arena, SIX, 0, 2, 3);
      g.strides.setAtIndex(JAVA_LONG, 0, 1); // a transposed view
      g.strides.setAtIndex(JAVA_LONG, 1, 2);
      KilnException e =
          assertThrows(KilnException.class, () -> client.device(0).bufferFromDlpack(g.legacy));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), e.toString());
      assertEquals(1, g.deletions());
    }
  }

  @Test
  void refusalsAreInvalidArgumentAndDeleteTheTensorOnce() {
    try (Client client = Client.create("cpu");
        Arena arena = Arena.ofShared()) {
      Device device = client.device(0);
      StructLayout T = DlpackTensor.TENSOR;
      Map<String, Consumer<Foreign>> edits =
          Map.of(
              "transposed strides",
              f -> {
                f.strides.setAtIndex(JAVA_LONG, 0, 1);
                f.strides.setAtIndex(JAVA_LONG, 1, 2);
              },
              "DLPack 2",
              f -> f.versioned.set(JAVA_INT, offset(V, "version", "major"), 2),
              "CUDA memory",
              f ->
                  f.editTensors(
                      t -> t.set(JAVA_INT, offset(T, "device", "device_type"), DlpackTensor.DEVICE_CUDA)),
              "4 lanes",
              f -> f.editTensors(t -> t.set(JAVA_SHORT, offset(T, "dtype", "lanes"), (short) 4)),
              "24 bits",
              f -> f.editTensors(t -> t.set(JAVA_BYTE, offset(T, "dtype", "bits"), (byte) 24)));
      for (var edit : edits.entrySet()) {
        Foreign f = new Foreign(arena, SIX, 0, 2, 3);
        edit.getValue().accept(f);
        KilnException e =
            assertThrows(KilnException.class, () -> device.bufferFromDlpackVersioned(f.versioned), edit.getKey());
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), edit.getKey() + ": " + e);
        assertEquals(1, f.deletions(), edit.getKey());
      }
      KilnException e =
          assertThrows(KilnException.class, () -> device.bufferFromDlpackVersioned(MemorySegment.NULL));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      e = assertThrows(KilnException.class, () -> device.bufferFromDlpack((MemorySegment) null));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());

      // A device of a closed client: the tensor is still deleted, once.
      Client other = Client.create("cpu");
      Device stale = other.device(0);
      other.close();
      Foreign f = new Foreign(arena, SIX, 0, 2, 3);
      assertThrows(IllegalStateException.class, () -> stale.bufferFromDlpackVersioned(f.versioned));
      assertEquals(1, f.deletions());

      // Export of a closed buffer.
      Buffer closed = client.buffer(SIX, 6);
      closed.close();
      assertThrows(IllegalStateException.class, closed::toDlpackVersioned);
      assertThrows(IllegalStateException.class, closed::toDlpack);
    }
  }

  @Test
  void theInterpreterCopiesImportsAndDeletesAtOnce() {
    try (Client client = Client.create("interpreter");
        Arena arena = Arena.ofShared()) {
      Foreign f = new Foreign(arena, SIX, 0, 2, 3);
      try (Buffer b = client.device(0).bufferFromDlpackVersioned(f.versioned)) {
        assertEquals(1, f.deletions());
        assertFalse(b.isHostAlias());
        assertArrayEquals(SIX, b.toFloatArray());
      }
      assertEquals(1, f.deletions());
    }
  }

  @Test
  void aTensorWithoutStridesReportsNone() {
    try (Arena arena = Arena.ofShared()) {
      Foreign f = new Foreign(arena, SIX, 0, 6);
      f.editTensors(t -> t.set(ADDRESS, STRIDES, MemorySegment.NULL));
      DlpackTensor t = DlpackTensor.ofVersioned(f.versioned);
      assertNull(t.strides());
      assertArrayEquals(new long[] {6}, t.shape());
      assertEquals(f.data.address(), t.data().address());
      t.close();
      assertEquals(1, f.deletions());
      assertThrows(IllegalArgumentException.class, () -> DlpackTensor.ofLegacy(MemorySegment.NULL));
    }
  }
}
