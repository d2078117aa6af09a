package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Map;

/** Writing safetensors files; read them with {@link SafetensorsFile#open}. */
public final class Safetensors {
  private Safetensors() {}

  /**
   * Writes {@code tensors} (waiting until each buffer is ready) to {@code path} as a
   * safetensors file, in the map's iteration order (use a {@link java.util.LinkedHashMap} to
   * choose it), with {@code metadata} (may be null) as its {@code __metadata__}. Names must not
   * be {@code "__metadata__"}. Element types without a safetensors dtype (C128) are
   * INVALID_ARGUMENT; NOT_FOUND when the file cannot be created.
   */
  public static void save(Path path, Map<String, Buffer> tensors, Map<String, String> metadata) {
    Map<String, String> meta = metadata == null ? Map.of() : metadata;
    try (Arena arena = Arena.ofConfined()) {
      int n = tensors.size();
      // At least one slot each: never pass NULL arrays.
      MemorySegment names = arena.allocate(ADDRESS, Math.max(1, n));
      MemorySegment buffers = arena.allocate(ADDRESS, Math.max(1, n));
      int i = 0;
      for (Map.Entry<String, Buffer> entry : tensors.entrySet()) {
        names.setAtIndex(ADDRESS, i, Native.cString(arena, entry.getKey()));
        Buffer buffer = entry.getValue();
        buffers.setAtIndex(ADDRESS, i, buffer == null ? MemorySegment.NULL : buffer.handle());
        i++;
      }
      int m = meta.size();
      MemorySegment keys = arena.allocate(ADDRESS, Math.max(1, m));
      MemorySegment values = arena.allocate(ADDRESS, Math.max(1, m));
      int j = 0;
      for (Map.Entry<String, String> entry : meta.entrySet()) {
        keys.setAtIndex(ADDRESS, j, Native.cString(arena, entry.getKey()));
        values.setAtIndex(ADDRESS, j, Native.cString(arena, entry.getValue()));
        j++;
      }
      Native.check(
          (MemorySegment)
              Native.kiln_safetensors_write_file.invokeExact(
                  arena.allocateFrom(path.toString()), names, buffers, (long) n, keys, values, (long) m));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }
}
