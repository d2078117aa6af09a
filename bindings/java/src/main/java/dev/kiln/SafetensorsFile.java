package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A safetensors file (Hugging Face's format for weights) opened for reading: libkiln reads and
 * checks its header once, then reads tensors by name into buffers. Write one with {@link
 * Safetensors#save}.
 *
 * <p>Thread-safe: the methods (and {@link #close()}) are synchronized, since the library wants
 * one caller at a time. Buffers read from the file belong to their device's {@link Client} and
 * outlive the file.
 */
public final class SafetensorsFile extends NativeHandle {
  private SafetensorsFile(MemorySegment handle) {
    super(handle);
  }

  /**
   * Opens {@code path} and checks its header: NOT_FOUND when it cannot be opened;
   * INVALID_ARGUMENT for a malformed header (not a JSON object, an unknown dtype, data offsets
   * that do not match the shape, overlap, leave holes or miss the end of the file, a name given
   * twice); DATA_LOSS for a truncated file. The message names the file and the tensor.
   */
  public static SafetensorsFile open(Path path) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_safetensors_open.invokeExact(arena.allocateFrom(path.toString()), out));
      return new SafetensorsFile(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  @Override
  void destroy(MemorySegment h) throws Throwable {
    Native.kiln_safetensors_destroy.invokeExact(h);
  }

  /** Frees the file; later calls do nothing. Buffers read from it stay valid. */
  @Override
  public synchronized void close() {
    super.close();
  }

  /** The names of the file's tensors, in the order of their data. */
  public synchronized List<String> names() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment count = arena.allocate(JAVA_LONG);
      Native.check((MemorySegment) Native.kiln_safetensors_tensor_count.invokeExact(handle(), count));
      long n = count.get(JAVA_LONG, 0);
      List<String> names = new ArrayList<>();
      MemorySegment out = Native.outPointer(arena);
      for (long i = 0; i < n; i++) {
        Native.check(
            (MemorySegment) Native.kiln_safetensors_tensor_name.invokeExact(handle(), i, out));
        names.add(Native.string(out.get(ADDRESS, 0)));
      }
      return List.copyOf(names);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * The value of the {@code __metadata__} entry {@code key}; NOT_FOUND when the file has none
   * by that name.
   */
  public synchronized String metadata(String key) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_safetensors_metadata.invokeExact(
                  handle(), Native.cString(arena, key), out));
      return Native.string(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * Reads tensor {@code name} into a new buffer on {@code device}, owned by the caller (and by
   * the device's client). NOT_FOUND, listing the file's tensors, for an unknown name;
   * RESOURCE_EXHAUSTED for a tensor over the library's file-array limit; DATA_LOSS when the
   * file changed under it.
   */
  public synchronized Buffer read(String name, Device device) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_safetensors_read.invokeExact(
                  handle(), device.handle(), Native.cString(arena, name), out));
      return new Buffer(device.client(), out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "SafetensorsFile[closed]" : "SafetensorsFile" + names();
  }
}
