package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Several devices of a host backend, placement, copies between devices, and host aliasing. */
class DeviceTest {
  static final Shape F32_4 = Shape.of(ElementType.F32, 4);

  /** f32[4] -> f32[4]: x + 1. */
  static Executable addOne(Client client) {
    try (Builder b = Builder.create("add_one");
        Computation c =
            b.build(b.add(b.parameter(0, F32_4), b.constant(new float[] {1, 1, 1, 1}, 4)))) {
      return client.compile(c);
    }
  }

  @Test
  void aCpuClientPresentsTheDevicesAskedFor() {
    try (Client client = Client.create("cpu", 3)) {
      List<Device> devices = client.devices();
      assertEquals(3, devices.size());
      assertEquals(3, new HashSet<>(devices).size(), "equal devices: " + devices);
      for (int i = 0; i < devices.size(); i++) {
        Device d = devices.get(i);
        assertEquals(i, d.index());
        assertEquals(client.deviceDescription(i), d.description());
        assertFalse(d.description().isEmpty());
        assertEquals(d, client.device(i)); // equal devices, equal handles
        assertEquals(client, d.client());
      }
      assertEquals(3, devices.stream().map(Device::description).distinct().count(), devices.toString());
      KilnException e = assertThrows(KilnException.class, () -> client.device(3));
      assertEquals(StatusCode.OUT_OF_RANGE, e.code(), e.toString());
    }
    try (Client one = Client.create("cpu")) {
      assertEquals(1, one.devices().size());
    }
    try (Client interpreter = Client.create("interpreter", 2)) {
      assertEquals(2, interpreter.devices().size());
    }
  }

  @Test
  void tooManyHostDevicesAreRefused() {
    KilnException e = assertThrows(KilnException.class, () -> Client.create("cpu", 65));
    assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), e.toString());
  }

  @Test
  void buffersLiveWhereTheyAreMadeAndRunsFollowThem() {
    try (Client client = Client.create("cpu", 3);
        Executable exe = addOne(client)) {
      Device first = client.device(0);
      Device third = client.device(2);
      try (Buffer onFirst = client.buffer(new float[] {1, 2, 3, 4}, 4);
          Buffer onThird = third.buffer(new float[] {5, 6, 7, 8}, 4)) {
        assertEquals(first, onFirst.device());
        assertEquals(third, onThird.device());
        // Without a device the run follows its first argument, and so do its results.
        try (Buffer out = exe.execute(onThird).get(0)) {
          assertEquals(third, out.device());
          assertArrayEquals(new float[] {6, 7, 8, 9}, out.toFloatArray());
        }
        // On a chosen device.
        try (Buffer out = exe.execute(ExecuteOptions.DEFAULT.withDevice(third), onThird).get(0)) {
          assertEquals(third, out.device());
          assertArrayEquals(new float[] {6, 7, 8, 9}, out.toFloatArray());
        }
        // An argument elsewhere than the chosen device is INVALID_ARGUMENT.
        KilnException e =
            assertThrows(
                KilnException.class,
                () -> exe.execute(ExecuteOptions.DEFAULT.withDevice(first), onThird));
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), e.toString());
        KilnException async =
            assertThrows(
                KilnException.class,
                () -> exe.executeAsync(ExecuteOptions.DEFAULT.withDevice(third), onFirst));
        assertEquals(StatusCode.INVALID_ARGUMENT, async.code(), async.toString());
      }
    }
  }

  @Test
  void copyToMovesABufferToAnotherDevice() {
    try (Client client = Client.create("cpu", 2);
        Executable exe = addOne(client)) {
      Device second = client.device(1);
      try (Buffer a = client.buffer(new float[] {1, 2, 3, 4}, 4);
          Buffer b = a.copyTo(second);
          Buffer out = exe.execute(ExecuteOptions.DEFAULT.withDevice(second), b).get(0);
          Buffer back = out.copyTo(client.device(0))) {
        assertEquals(client.device(0), a.device());
        assertEquals(second, b.device());
        assertArrayEquals(new float[] {1, 2, 3, 4}, b.toFloatArray());
        assertArrayEquals(new float[] {2, 3, 4, 5}, back.toFloatArray());
        assertEquals(client.device(0), back.device());
      }
    }
  }

  @Test
  void copyToAnotherClientsDeviceIsInvalidArgument() {
    try (Client client = Client.create("cpu", 2);
        Client other = Client.create("cpu", 2);
        Buffer a = client.buffer(new float[] {1, 2, 3, 4}, 4)) {
      KilnException e = assertThrows(KilnException.class, () -> a.copyTo(other.device(1)));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), e.toString());
    }
  }

  @Test
  void aClosedClientsDeviceIsAJavaError() {
    Client client = Client.create("cpu", 2);
    Device d = client.device(1);
    client.close();
    assertThrows(IllegalStateException.class, d::description);
    assertThrows(IllegalStateException.class, () -> d.buffer(new float[] {1}, 1));
  }

  /** Four floats in a 64-byte aligned native segment of {@code arena}. */
  static MemorySegment aligned(Arena arena, float... values) {
    MemorySegment s = arena.allocate(values.length * 4L, 64);
    MemorySegment.copy(values, 0, s, ValueLayout.JAVA_FLOAT, 0, values.length);
    return s;
  }

  @Test
  void theCpuBackendAliasesAlignedHostMemoryAndReleasesItOnce() {
    AtomicInteger released = new AtomicInteger();
    try (Client client = Client.create("cpu");
        Executable exe = addOne(client);
        Arena arena = Arena.ofShared()) {
      MemorySegment data = aligned(arena, 1, 2, 3, 4);
      int pending = Device.pendingAliases();
      Buffer alias =
          client.device(0).aliasHost(ElementType.F32, data, new long[] {4}, released::incrementAndGet);
      assertTrue(alias.isHostAlias());
      assertEquals(pending + 1, Device.pendingAliases(), "the binding keeps the segment");
      assertEquals(0, released.get());
      // In place: a change of the host memory shows in the buffer.
      data.setAtIndex(ValueLayout.JAVA_FLOAT, 0, 10);
      assertArrayEquals(new float[] {10, 2, 3, 4}, alias.toFloatArray());
      try (Buffer out = exe.execute(alias).get(0)) {
        assertArrayEquals(new float[] {11, 3, 4, 5}, out.toFloatArray());
        assertFalse(out.isHostAlias());
      }
      assertEquals(0, released.get(), "released while the buffer is open");
      alias.close();
      assertEquals(1, released.get());
      alias.close();
      assertEquals(pending, Device.pendingAliases());
      assertEquals(1, released.get());
    }
    assertEquals(1, released.get());
  }

  @Test
  void anAliasReadByARunningExecutionIsReleasedWhenTheRunEnds() {
    AtomicInteger released = new AtomicInteger();
    try (Client client = Client.create("cpu");
        Executable exe = addOne(client);
        Arena arena = Arena.ofShared()) {
      Buffer alias =
          client
              .device(0)
              .aliasHost(ElementType.F32, aligned(arena, 1, 2, 3, 4), new long[] {4}, released::incrementAndGet);
      try (Execution run = exe.executeAsync(alias)) {
        alias.close();
        assertArrayEquals(new float[] {2, 3, 4, 5}, run.await().get(0).toFloatArray());
        run.results().get(0).close();
      }
      // The library releases once the execution no longer reads the memory.
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (released.get() == 0 && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertEquals(1, released.get());
    }
  }

  @Test
  void theCpuBackendAliasesDataAlignedToItsElementTypeOnly() {
    try (Client cpu = Client.create("cpu");
        Arena arena = Arena.ofShared()) {
      MemorySegment block = arena.allocate(128, 64);
      // {type, byte offset past a 64-byte boundary, aliased}: the element's alignment decides
      // (a complex type's: its parts'), not 64 bytes.
      Object[][] cases = {
        {ElementType.F32, 4L, true},
        {ElementType.F32, 36L, true},
        {ElementType.F32, 2L, false},
        {ElementType.F32, 1L, false},
        {ElementType.F64, 8L, true},
        {ElementType.F64, 4L, false},
        {ElementType.S32, 4L, true},
        {ElementType.C64, 4L, true},
        {ElementType.C64, 2L, false},
        {ElementType.C128, 8L, true},
        {ElementType.C128, 4L, false},
      };
      for (Object[] c : cases) {
        ElementType type = (ElementType) c[0];
        long offset = (long) c[1];
        boolean aliased = (boolean) c[2];
        String what = type + " at offset " + offset;
        AtomicInteger released = new AtomicInteger();
        Buffer b =
            cpu.device(0)
                .aliasHost(type, block.asSlice(offset, 32), new long[] {32 / type.byteWidth()}, released::incrementAndGet);
        assertEquals(aliased, b.isHostAlias(), what);
        assertEquals(aliased ? 0 : 1, released.get(), what);
        b.close();
        assertEquals(1, released.get(), what);
      }
    }
  }

  @Test
  void misalignedPredAndInterpreterAliasesAreCopiesReleasedAtOnce() {
    try (Arena arena = Arena.ofShared()) {
      MemorySegment data = aligned(arena, 0, 1, 2, 3, 4);
      // Off the f32 alignment (1 byte past a 64-byte boundary) on cpu; aligned on the
      // interpreter, which never aliases.
      try (Client cpu = Client.create("cpu");
          Client interpreter = Client.create("interpreter")) {
        MemorySegment unaligned = data.asSlice(1, 16);
        Object[][] cases = {
          {cpu.device(0), unaligned}, {interpreter.device(0), data.asSlice(0, 16)},
        };
        for (Object[] c : cases) {
          AtomicInteger released = new AtomicInteger();
          Device device = (Device) c[0];
          MemorySegment segment = (MemorySegment) c[1];
          try (Buffer copy =
              device.aliasHost(ElementType.F32, segment, new long[] {4}, released::incrementAndGet)) {
            assertFalse(copy.isHostAlias(), device.toString());
            assertEquals(1, released.get(), device + ": released before returning");
            segment.set(ValueLayout.JAVA_FLOAT_UNALIGNED, 0, 42);
            assertNotEquals(42f, copy.toFloatArray()[0], "a copy does not follow the host memory");
          }
          assertEquals(1, released.get());
        }
        // PRED is never aliased.
        MemorySegment pred = arena.allocate(64, 64);
        AtomicInteger released = new AtomicInteger();
        try (Buffer b =
            cpu.device(0).aliasHost(ElementType.PRED, pred.asSlice(0, 4), new long[] {4}, released::incrementAndGet)) {
          assertFalse(b.isHostAlias());
          assertEquals(1, released.get());
        }
      }
    }
  }

  @Test
  void aFailedAliasIsReleasedAndHeapSegmentsAreRefused() {
    AtomicInteger released = new AtomicInteger();
    try (Client client = Client.create("cpu");
        Arena arena = Arena.ofConfined()) {
      int pending = Device.pendingAliases();
      // 16 bytes for f32[5]: the library refuses, and releases before returning.
      KilnException e =
          assertThrows(
              KilnException.class,
              () ->
                  client
                      .device(0)
                      .aliasHost(ElementType.F32, arena.allocate(16, 64), new long[] {5}, released::incrementAndGet));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code(), e.toString());
      assertEquals(1, released.get());
      assertEquals(pending, Device.pendingAliases());
      assertThrows(
          IllegalArgumentException.class,
          () -> client.device(0).aliasHost(ElementType.F32, MemorySegment.ofArray(new float[4]), 4));
    }
  }

  @Test
  void aDirectByteBufferCanBeAliased() {
    AtomicInteger released = new AtomicInteger();
    try (Client client = Client.create("cpu")) {
      ByteBuffer bytes = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
      bytes.asFloatBuffer().put(new float[] {1, 2, 3, 4});
      try (Buffer b =
          client.device(0).aliasHost(ElementType.F32, bytes, new long[] {4}, released::incrementAndGet)) {
        assertArrayEquals(new float[] {1, 2, 3, 4}, b.toFloatArray());
      }
      assertEquals(1, released.get());
    }
  }
}
