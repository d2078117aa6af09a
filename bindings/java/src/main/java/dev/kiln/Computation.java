package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A built or parsed computation (a module with an entry). Immutable and thread-safe; it does
 * not belong to a client and may be closed once compiled.
 */
public final class Computation extends NativeHandle {
  Computation(MemorySegment handle) {
    super(handle);
  }

  /** Parses and verifies XLA HLO text; errors are INVALID_ARGUMENT naming line and column. */
  public static Computation fromHloText(String text) {
    try (Arena arena = Arena.ofConfined()) {
      byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
      MemorySegment bytes = arena.allocate(Math.max(1, utf8.length));
      MemorySegment.copy(MemorySegment.ofArray(utf8), 0, bytes, 0, utf8.length);
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_computation_from_hlo_text.invokeExact(bytes, (long) utf8.length, out));
      return new Computation(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Reads and parses an HLO text file. */
  public static Computation fromHloFile(Path path) {
    try {
      return fromHloText(Files.readString(path));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  void destroy(MemorySegment h) throws Throwable {
    Native.kiln_computation_destroy.invokeExact(h);
  }

  /** The computation as HLO text. */
  public String toHloText() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check((MemorySegment) Native.kiln_computation_to_hlo_text.invokeExact(handle(), out));
      MemorySegment text = out.get(ADDRESS, 0);
      try {
        return Native.string(text);
      } finally {
        Native.kiln_string_destroy.invokeExact(text);
      }
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The number of parameters of the entry computation. */
  public long parameterCount() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_LONG);
      Native.check(
          (MemorySegment) Native.kiln_computation_parameter_count.invokeExact(handle(), out));
      return out.get(JAVA_LONG, 0);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "Computation[closed]" : toHloText();
  }
}
