package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Raw CUDA memory and DLPack's kDLCUDA on Kiln's fake CUDA driver (tests/cuda/fake_driver), whose
 * device memory is host memory and whose launches run nothing: addresses round-trip through an
 * alias and through DLPack, an alias reads back the values at its address, a kernel run on it is
 * given that address (the fake records the launch), the release action and the tensor's deleter
 * run once, and refusals carry their code and name the call.
 *
 * <p>The CUDA driver loads once per process, so the pom runs this class alone in its own JVM
 * (the fake-cuda execution) with KILN_CUDA_DRIVER naming the fake driver (the kiln.fakeCudaDriver
 * property, which ci.sh sets to the one in the build tree) and KILN_FAKE_CUDA_DEVICES=2. Without
 * it the tests fail, saying so.
 */
@SuppressWarnings("restricted") // reads the fake driver's memory and its symbol
class CudaMemoryTest {
  static final float[] SIX = DlpackTest.SIX;
  static final long[] DIMS = {2, 3};

  static Client cuda;

  @BeforeAll
  static void fakeDriver() {
    String driver = System.getenv("KILN_CUDA_DRIVER");
    if (driver == null || driver.isEmpty() || !Files.exists(Path.of(driver))) {
      throw new IllegalStateException(
          "KILN_CUDA_DRIVER='"
              + driver
              + "' is not Kiln's fake CUDA driver: build BUILD_DIR/tests/cuda/libkiln_fake_cuda_driver.so"
              + " (cmake --build BUILD_DIR --target kiln_fake_cuda_driver) and pass"
              + " -Dkiln.fakeCudaDriver=<it> to maven (bindings/java/ci.sh does)");
    }
    cuda = Client.create("cuda");
    assertEquals(2, cuda.devices().size(), "KILN_FAKE_CUDA_DEVICES=2 shows two GPUs");
  }

  @AfterAll
  static void closeClient() {
    if (cuda != null) {
      cuda.close();
    }
  }

  /** GPU memory "another library" owns: a Kiln buffer on GPU {@code gpu} holding SIX. */
  static Buffer owner(int gpu) {
    Buffer b = cuda.device(gpu).buffer(SIX, DIMS);
    CudaMemory m = b.cudaMemory().orElseThrow();
    assertEquals(gpu, m.ordinal());
    assertNotEquals(0, m.address());
    return b;
  }

  static long addressOf(Buffer b) {
    return b.cudaMemory().orElseThrow().address();
  }

  static void assertRefused(Runnable call, String function, String needle) {
    KilnException e = assertThrows(KilnException.class, call::run, needle);
    assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(function), e.getMessage() + " does not name " + function);
    assertTrue(e.getMessage().contains(needle), e.getMessage() + " lacks " + needle);
  }

  @Test
  void anAliasLiesAtItsAddressAndReleasesOnce() {
    for (int gpu = 0; gpu < 2; gpu++) {
      try (Buffer owner = owner(gpu)) {
        long address = addressOf(owner);
        AtomicInteger released = new AtomicInteger();
        Buffer b = cuda.device(gpu).aliasCudaMemory(ElementType.F32, address, DIMS, released::incrementAndGet);
        assertEquals(Optional.of(new CudaMemory(gpu, address)), b.cudaMemory());
        assertArrayEquals(SIX, b.toFloatArray(), "the values at the aliased address");
        assertEquals(0, released.get());
        b.close();
        b.close();
        assertEquals(1, released.get(), "released once, when the alias closed");
      }
    }
    try (Buffer owner = owner(0);
        Buffer b = cuda.device(0).aliasCudaMemory(ElementType.F32, addressOf(owner), DIMS, null)) {
      assertArrayEquals(SIX, b.toFloatArray(), "an alias without a release action");
    }
  }

  /** The parameters of the fake driver's last launch. */
  static long[] lastLaunchParameters() {
    try (Arena arena = Arena.ofConfined()) {
      SymbolLookup fake = SymbolLookup.libraryLookup(Path.of(System.getenv("KILN_CUDA_DRIVER")), arena);
      MethodHandle lastLaunch =
          Linker.nativeLinker()
              .downcallHandle(
                  fake.find("kiln_fake_cuda_last_launch").orElseThrow(),
                  FunctionDescriptor.of(
                      JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
      MemorySegment entry = arena.allocate(128);
      MemorySegment grid = arena.allocate(JAVA_INT, 3);
      MemorySegment block = arena.allocate(JAVA_INT, 3);
      MemorySegment parameters = arena.allocate(JAVA_LONG, 64);
      int count = (int) lastLaunch.invokeExact(entry, 128L, grid, block, parameters, 64L);
      return parameters.asSlice(0, Math.min(count, 64) * 8L).toArray(JAVA_LONG);
    } catch (Throwable t) {
      throw new AssertionError(t);
    }
  }

  @Test
  void aKernelRunOnAnAliasIsGivenItsAddress() {
    AtomicInteger released = new AtomicInteger();
    try (Buffer owner = owner(0);
        Builder b = Builder.create("add_one")) {
      long address = addressOf(owner);
      Op x = b.parameter(0, Shape.of(ElementType.F32, DIMS), "x");
      try (Computation c = b.build(b.add(x, b.broadcast(b.constant(1.0f), DIMS)));
          Executable exe = cuda.compile(c)) {
        Buffer alias = cuda.device(0).aliasCudaMemory(ElementType.F32, address, DIMS, released::incrementAndGet);
        java.util.List<Buffer> out = exe.execute(alias);
        long[] parameters = lastLaunchParameters();
        assertTrue(
            java.util.Arrays.stream(parameters).anyMatch(p -> p == address),
            "the kernel's parameters lack the aliased address");
        for (Buffer o : out) {
          o.close();
        }
        assertEquals(0, released.get(), "the alias is still open");
        alias.close();
        assertEquals(1, released.get());
      }
    }
  }

  @Test
  void hostBuffersHaveNoCudaMemory() {
    try (Client cpu = Client.create("cpu");
        Buffer b = cpu.buffer(SIX, DIMS)) {
      assertEquals(Optional.empty(), b.cudaMemory());
    }
  }

  @Test
  void aliasRefusalsCarryTheCodeAndReleaseOnce() {
    try (Buffer owner = owner(0);
        Client cpu = Client.create("cpu")) {
      long address = addressOf(owner);
      Device gpu = cuda.device(0);
      Object[][] cases = {
        {cpu.device(0), address, "the cpu backend cannot read CUDA device memory"},
        {gpu, address + 2, "cuda: device address 0x"},
        {gpu, 0L, "which holds elements"},
      };
      for (Object[] c : cases) {
        AtomicInteger released = new AtomicInteger();
        assertRefused(
            () -> ((Device) c[0]).aliasCudaMemory(ElementType.F32, (long) c[1], DIMS, released::incrementAndGet),
            "kiln_device_buffer_alias_cuda_memory",
            (String) c[2]);
        assertEquals(1, released.get(), c[2] + ": released once");
      }
    }
  }

  @Test
  void anAliasOnAClosedClientThrowsAndStillReleasesOnce() {
    try (Buffer owner = owner(0)) {
      Client other = Client.create("cuda");
      Device device = other.device(0);
      other.close();
      AtomicInteger released = new AtomicInteger();
      assertThrows(
          IllegalStateException.class,
          () -> device.aliasCudaMemory(ElementType.F32, addressOf(owner), DIMS, released::incrementAndGet));
      assertEquals(1, released.get(), "released once, though the client was closed");
    }
  }

  @Test
  void aCudaBufferExportsItsOwnGpuMemory() {
    for (int gpu = 0; gpu < 2; gpu++) {
      DlpackTensor versioned;
      DlpackTensor legacy;
      long address;
      try (Buffer b = owner(gpu)) {
        address = addressOf(b);
        versioned = b.toDlpackVersioned();
        legacy = b.toDlpack();
      }
      try (versioned;
          legacy) {
        for (DlpackTensor t : new DlpackTensor[] {versioned, legacy}) {
          assertEquals(DlpackTensor.DEVICE_CUDA, t.deviceType());
          assertEquals(gpu, t.deviceId());
          assertEquals(address, t.data().address());
          assertArrayEquals(DIMS, t.shape());
        }
        assertTrue(versioned.isReadOnly());
        assertFalse(versioned.isCopied());
        // The fake's GPU memory is host memory: the tensor keeps it after the buffer closed.
        assertArrayEquals(SIX, versioned.data().toArray(JAVA_FLOAT));
      }
    }
  }

  /** A foreign kDLCUDA f32[2,3] tensor at {@code address} on GPU {@code gpu}. */
  static DlpackTest.Foreign foreignOnGpu(Arena arena, long address, int gpu) {
    DlpackTest.Foreign f = new DlpackTest.Foreign(arena, SIX, 0, DIMS);
    f.editTensors(
        t -> {
          t.set(ADDRESS, DlpackTest.offset(DlpackTensor.TENSOR, "data"), MemorySegment.ofAddress(address));
          t.set(JAVA_INT, DlpackTest.offset(DlpackTensor.TENSOR, "device", "device_type"), DlpackTensor.DEVICE_CUDA);
          t.set(JAVA_INT, DlpackTest.offset(DlpackTensor.TENSOR, "device", "device_id"), gpu);
        });
    return f;
  }

  @Test
  void aKdlCudaTensorImportsInPlaceAndIsDeletedOnce() {
    try (Arena arena = Arena.ofShared()) {
      for (int gpu = 0; gpu < 2; gpu++) {
        try (Buffer owner = owner(gpu)) {
          long address = addressOf(owner);
          DlpackTest.Foreign f = foreignOnGpu(arena, address, gpu);
          Buffer b = cuda.device(gpu).bufferFromDlpackVersioned(f.versioned);
          assertEquals(Optional.of(new CudaMemory(gpu, address)), b.cudaMemory());
          assertArrayEquals(SIX, b.toFloatArray());
          try (DlpackTensor back = b.toDlpackVersioned()) {
            assertEquals(address, back.data().address(), "one address both ways");
          }
          assertEquals(0, f.deletions());
          b.close();
          assertEquals(1, f.deletions(), "deleted once, when the buffer closed");
        }
      }
      // The legacy struct.
      try (Buffer owner = owner(1)) {
        DlpackTest.Foreign f = foreignOnGpu(arena, addressOf(owner), 1);
        try (Buffer b = cuda.device(1).bufferFromDlpack(f.legacy)) {
          assertEquals(addressOf(owner), addressOf(b));
          assertArrayEquals(SIX, b.toFloatArray());
        }
        assertEquals(1, f.deletions());
      }
    }
  }

  @Test
  void kdlCudaRefusalsCarryTheCodeAndDeleteOnce() {
    try (Arena arena = Arena.ofShared();
        Buffer owner = owner(0);
        Client cpu = Client.create("cpu")) {
      long address = addressOf(owner);
      Device gpu = cuda.device(0);
      Object[][] cases = {
        {gpu, address, 5, "the tensor lives on CUDA GPU 5 (kDLCUDA), which this cuda client does not have"},
        {gpu, address, 1, "the tensor lives on CUDA GPU 1 (kDLCUDA), the device given is cuda:0"},
        {cpu.device(0), address, 0, "the device is cpu's, which cannot read GPU memory"},
        {gpu, address + 2, 0, "is not aligned to its element type (4 bytes)"},
      };
      for (Object[] c : cases) {
        DlpackTest.Foreign f = foreignOnGpu(arena, (long) c[1], (int) c[2]);
        assertRefused(
            () -> ((Device) c[0]).bufferFromDlpackVersioned(f.versioned),
            "kiln_device_buffer_from_dlpack_versioned",
            (String) c[3]);
        assertEquals(1, f.deletions(), c[3] + ": deleted once");
      }
    }
  }
}
