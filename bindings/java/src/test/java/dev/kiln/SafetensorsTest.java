package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Safetensors files through the binding: round trips, a file written by hand to the format,
 * and the library's refusals of malformed files with its codes and messages.
 */
class SafetensorsTest {
  @TempDir Path dir;

  static byte[] littleEndian(int bytes, java.util.function.Consumer<ByteBuffer> fill) {
    ByteBuffer b = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    fill.accept(b);
    return b.array();
  }

  /**
   * Writes a file to the format's description: an 8-byte little-endian header size (plus
   * {@code delta}, to lie about it), the JSON header, then {@code data}.
   */
  Path writeByHand(String name, String header, byte[] data, long delta) throws IOException {
    byte[] json = header.getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(littleEndian(8, b -> b.putLong(json.length + delta)));
    out.write(json);
    out.write(data);
    Path path = dir.resolve(name);
    Files.write(path, out.toByteArray());
    return path;
  }

  static void assertError(StatusCode code, Runnable action, String... needles) {
    KilnException e = assertThrows(KilnException.class, action::run);
    assertEquals(code, e.code(), e.toString());
    for (String needle : needles) {
      assertTrue(e.getMessage().contains(needle), e + " does not mention " + needle);
    }
  }

  @Test
  void roundTripOfSeveralTypesWithMetadata() throws IOException {
    try (Client client = Client.create("cpu")) {
      Device device = client.device(0);
      byte[] bf16 = littleEndian(4, b -> b.putShort((short) 0x3f80).putShort((short) 0xc000));
      byte[] c64 = littleEndian(8, b -> b.putFloat(1).putFloat(-1));
      Map<String, Buffer> tensors = new LinkedHashMap<>();
      tensors.put("layer.weight", device.buffer(new float[] {1, -2, 3.5f, 4, 5, 6}, 2, 3));
      tensors.put("step", device.buffer(new long[] {-7})); // an s64 scalar
      tensors.put("mask", device.buffer(new boolean[] {true, false, true}, 3));
      tensors.put("ids", device.buffer(new int[] {}, 2, 0));
      tensors.put("bytes", device.buffer(new byte[] {0, 1, -2}, 3));
      tensors.put("wide", device.buffer(new double[] {1e300, -0.5}, 2));
      tensors.put(
          "scale",
          device.buffer(ElementType.BF16, MemorySegment.ofArray(bf16), new long[] {2}, null));
      tensors.put("z", device.buffer(ElementType.C64, MemorySegment.ofArray(c64), new long[] {1}, null));
      Map<String, String> metadata = new LinkedHashMap<>();
      metadata.put("format", "pt");
      metadata.put("written_by", "kiln-java");
      metadata.put("note", "ünïcode, \"quotes\"");
      Path path = dir.resolve("round_trip.safetensors");
      Safetensors.save(path, tensors, metadata);

      try (SafetensorsFile file = SafetensorsFile.open(path)) {
        assertEquals(List.copyOf(tensors.keySet()), file.names(), "the order given");
        for (var entry : metadata.entrySet()) {
          assertEquals(entry.getValue(), file.metadata(entry.getKey()), entry.getKey());
        }
        assertError(StatusCode.NOT_FOUND, () -> file.metadata("missing"), "missing");
        for (var entry : tensors.entrySet()) {
          try (Buffer back = file.read(entry.getKey(), device)) {
            assertEquals(entry.getValue().shape(), back.shape(), entry.getKey());
            assertArrayEquals(entry.getValue().toBytes(), back.toBytes(), entry.getKey());
            assertEquals(device, back.device());
          }
        }
        try (Buffer step = file.read("step", device);
            Buffer mask = file.read("mask", device)) {
          assertEquals(0, step.dimensions().length);
          assertArrayEquals(new long[] {-7}, step.toLongArray());
          assertEquals(ElementType.PRED, mask.elementType());
          assertArrayEquals(new boolean[] {true, false, true}, mask.toBooleanArray());
        }
      }

      // The file follows the format: 8-byte size, a JSON header giving each tensor's dtype,
      // shape and offsets, then the data in the order given.
      byte[] raw = Files.readAllBytes(path);
      long n = ByteBuffer.wrap(raw, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
      String header = new String(raw, 8, (int) n, StandardCharsets.UTF_8);
      assertTrue(header.contains("\"__metadata__\":{"), header);
      Map<String, String> dtypes =
          Map.of("layer.weight", "F32", "step", "I64", "mask", "BOOL", "ids", "I32", "bytes", "I8",
              "wide", "F64", "scale", "BF16", "z", "C64");
      long offset = 0;
      for (var entry : tensors.entrySet()) {
        String name = Pattern.quote(entry.getKey());
        Matcher m =
            Pattern.compile("\"" + name + "\":\\{([^}]*)\\}").matcher(header);
        assertTrue(m.find(), name + " in " + header);
        String fields = m.group(1);
        byte[] bytes = entry.getValue().toBytes();
        long end = offset + bytes.length;
        assertTrue(fields.contains("\"dtype\":\"" + dtypes.get(entry.getKey()) + "\""), fields);
        assertTrue(fields.contains("\"data_offsets\":[" + offset + "," + end + "]"), fields);
        byte[] stored = new byte[bytes.length];
        System.arraycopy(raw, (int) (8 + n + offset), stored, 0, bytes.length);
        assertArrayEquals(bytes, stored, entry.getKey());
        offset = end;
      }
      assertEquals(raw.length, 8 + n + offset);

      // No tensors and no metadata: an empty file.
      Path empty = dir.resolve("empty.safetensors");
      Safetensors.save(empty, Map.of(), null);
      try (SafetensorsFile file = SafetensorsFile.open(empty)) {
        assertEquals(List.of(), file.names());
      }
    }
  }

  @Test
  void readsAFileWrittenByHand() throws IOException {
    byte[] data =
        littleEndian(
            27,
            b -> {
              b.putFloat(1.5f).putFloat(-2).putFloat(3.25f).putFloat(0); // weight [0, 16)
              b.put((byte) 1).put((byte) 0).put((byte) 7); // flags [16, 19): 7 reads as true
              b.putLong(-1234567890123L); // count [19, 27)
            });
    // Keys in no particular order, whitespace, and padding after the object.
    String header =
        "{\"count\": {\"dtype\": \"I64\", \"shape\": [], \"data_offsets\": [19, 27]},"
            + " \"__metadata__\": {\"format\": \"pt\", \"source\": \"by hand\"},"
            + " \"weight\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 16]},"
            + " \"flags\": {\"dtype\": \"BOOL\", \"shape\": [3], \"data_offsets\": [16, 19]}}   ";
    Path path = writeByHand("by_hand.safetensors", header, data, 0);
    try (Client client = Client.create("cpu", 2);
        SafetensorsFile file = SafetensorsFile.open(path)) {
      Device device = client.device(0);
      assertEquals(List.of("weight", "flags", "count"), file.names(), "the order of the data");
      assertEquals("by hand", file.metadata("source"));
      assertEquals("pt", file.metadata("format"));
      try (Buffer weight = file.read("weight", device);
          Buffer flags = file.read("flags", device);
          Buffer count = file.read("count", device);
          Buffer again = file.read("weight", client.device(1))) {
        assertEquals(Shape.of(ElementType.F32, 2, 2), weight.shape());
        assertArrayEquals(new float[] {1.5f, -2, 3.25f, 0}, weight.toFloatArray());
        assertArrayEquals(new boolean[] {true, false, true}, flags.toBooleanArray());
        assertEquals(Shape.of(ElementType.S64), count.shape());
        assertArrayEquals(new long[] {-1234567890123L}, count.toLongArray());
        assertEquals(1, again.device().index());
        assertArrayEquals(new float[] {1.5f, -2, 3.25f, 0}, again.toFloatArray());
      }
    }
  }

  record Malformed(String name, String header, int data, long delta, StatusCode code, String needle) {}

  @Test
  void malformedFilesAreRefusedWithTheLibrarysMessage() throws IOException {
    List<Malformed> cases =
        List.of(
            new Malformed("bad_json", "{\"a\": nope}", 0, 0, StatusCode.INVALID_ARGUMENT, "not valid JSON"),
            new Malformed("not_object", "[1, 2]", 0, 0, StatusCode.INVALID_ARGUMENT, "start with '{'"),
            new Malformed(
                "overlap",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    + "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                12, 0, StatusCode.INVALID_ARGUMENT, "neither overlap nor leave holes"),
            new Malformed(
                "hole",
                "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                    + "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                12, 0, StatusCode.INVALID_ARGUMENT, "'b' starts at byte 8"),
            new Malformed(
                "wrong_size", "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}",
                8, 0, StatusCode.INVALID_ARGUMENT, "its shape needs 12"),
            new Malformed(
                "truncated_data", "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}",
                8, 0, StatusCode.INVALID_ARGUMENT, "the file holds 8"),
            new Malformed("truncated_header", "{\"a\":{}}", 0, 100, StatusCode.DATA_LOSS, "header declares"),
            new Malformed(
                "unknown_dtype", "{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}",
                1, 0, StatusCode.INVALID_ARGUMENT, "F8_E4M3"),
            new Malformed(
                "twice",
                "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                    + "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
                2, 0, StatusCode.INVALID_ARGUMENT, "'a' twice"),
            new Malformed("huge_header", "{}", 0, 1L << 40, StatusCode.INVALID_ARGUMENT, "at most 104857600"));
    for (Malformed c : cases) {
      Path path = writeByHand(c.name() + ".safetensors", c.header(), new byte[c.data()], c.delta());
      KilnException e = assertThrows(KilnException.class, () -> SafetensorsFile.open(path).close(), c.name());
      assertEquals(c.code(), e.code(), c.name() + ": " + e);
      assertTrue(e.getMessage().contains(c.needle()), c.name() + ": " + e);
      assertTrue(e.getMessage().contains(path.toString()), c.name() + ": names the file: " + e);
      assertTrue(e.getMessage().startsWith("kiln_safetensors_open: "), "the library's message: " + e);
    }
    Path tiny = dir.resolve("tiny.safetensors");
    Files.write(tiny, new byte[] {'a', 'b', 'c'});
    assertError(StatusCode.DATA_LOSS, () -> SafetensorsFile.open(tiny), "8 bytes of header size");
    Path missing = dir.resolve("missing.safetensors");
    assertError(StatusCode.NOT_FOUND, () -> SafetensorsFile.open(missing), missing.toString());
  }

  @Test
  void anUnknownNameIsNotFoundListingTheTensors() {
    try (Client client = Client.create("cpu")) {
      Device device = client.device(0);
      Map<String, Buffer> tensors = new LinkedHashMap<>();
      tensors.put("encoder.bias", device.buffer(new float[] {1}, 1));
      tensors.put("decoder.bias", device.buffer(new int[] {2, 3}, 2));
      Path path = dir.resolve("two.safetensors");
      Safetensors.save(path, tensors, null);
      try (SafetensorsFile file = SafetensorsFile.open(path)) {
        assertError(
            StatusCode.NOT_FOUND, () -> file.read("bias", device), "'bias'", "encoder.bias, decoder.bias");
        assertError(StatusCode.NOT_FOUND, () -> file.metadata("format"), "format");
      }
    }
  }

  @Test
  void saveErrors() {
    try (Client client = Client.create("cpu")) {
      Device device = client.device(0);
      Buffer x = device.buffer(new float[] {1, 2}, 2);
      Buffer z =
          device.buffer(ElementType.C128, MemorySegment.ofArray(new double[] {0, 1}), new long[] {1}, null);
      assertError(
          StatusCode.INVALID_ARGUMENT,
          () -> Safetensors.save(dir.resolve("c128"), Map.of("z", z), null),
          "no dtype for c128");
      assertError(
          StatusCode.INVALID_ARGUMENT,
          () -> Safetensors.save(dir.resolve("meta"), Map.of("__metadata__", x), null),
          "__metadata__");
      assertError(
          StatusCode.NOT_FOUND,
          () -> Safetensors.save(dir.resolve("no-such-dir").resolve("x"), Map.of("x", x), null),
          "cannot create");
      Map<String, Buffer> withNull = new LinkedHashMap<>();
      withNull.put("x", x);
      withNull.put("y", null);
      assertError(
          StatusCode.INVALID_ARGUMENT, () -> Safetensors.save(dir.resolve("null"), withNull, null), "buffers[1]");
      Map<String, String> nullValue = new LinkedHashMap<>();
      nullValue.put("k", null);
      assertError(
          StatusCode.INVALID_ARGUMENT,
          () -> Safetensors.save(dir.resolve("nullmeta"), Map.of("x", x), nullValue),
          "NULL key or value");
      x.close();
      assertThrows(IllegalStateException.class, () -> Safetensors.save(dir.resolve("closed"), Map.of("x", x), null));
    }
  }

  @Test
  void closeIsIdempotentAndBuffersOutliveTheFile() {
    try (Client client = Client.create("cpu")) {
      Device device = client.device(0);
      Path path = dir.resolve("x.safetensors");
      Safetensors.save(path, Map.of("x", device.buffer(new float[] {1, 2}, 2)), Map.of("k", "v"));
      SafetensorsFile file = SafetensorsFile.open(path);
      Buffer kept = file.read("x", device);
      file.close();
      file.close();
      assertTrue(file.isClosed());
      assertArrayEquals(new float[] {1, 2}, kept.toFloatArray());
      assertThrows(IllegalStateException.class, file::names);
      assertThrows(IllegalStateException.class, () -> file.read("x", device));
      assertThrows(IllegalStateException.class, () -> file.metadata("k"));
      assertEquals("SafetensorsFile[closed]", file.toString());
    }
  }

  @Test
  void concurrentReads() throws Exception {
    try (Client client = Client.create("cpu")) {
      Device device = client.device(0);
      Map<String, Buffer> tensors = new LinkedHashMap<>();
      for (int i = 0; i < 4; i++) {
        tensors.put("t" + i, device.buffer(new int[] {i, i * 10}, 2));
      }
      Path path = dir.resolve("many.safetensors");
      Safetensors.save(path, tensors, null);
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try (SafetensorsFile file = SafetensorsFile.open(path)) {
        List<Future<?>> futures = new ArrayList<>();
        for (int round = 0; round < 8; round++) {
          for (int i = 0; i < 4; i++) {
            int k = i;
            futures.add(
                pool.submit(
                    () -> {
                      try (Buffer b = file.read("t" + k, device)) {
                        assertArrayEquals(new int[] {k, k * 10}, b.toIntArray());
                      }
                    }));
          }
        }
        for (Future<?> f : futures) {
          f.get();
        }
      } finally {
        pool.shutdown();
      }
    }
  }
}
