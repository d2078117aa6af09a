package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;

/** Library-wide queries: version, backends, custom-call registration. */
public final class Kiln {
  private Kiln() {}

  /** The library's version, "MAJOR.MINOR.PATCH". */
  public static String version() {
    try {
      return Native.string((MemorySegment) Native.kiln_version.invokeExact());
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The library's version as major * 10000 + minor * 100 + patch. */
  public static int versionNumber() {
    try {
      return (int) Native.kiln_version_number.invokeExact();
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The names of the backends this library contains ("interpreter", "cpu", ...). */
  public static List<String> backends() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment count = arena.allocate(JAVA_LONG);
      Native.check((MemorySegment) Native.kiln_backend_count.invokeExact(count));
      List<String> names = new ArrayList<>();
      MemorySegment out = Native.outPointer(arena);
      for (long i = 0; i < count.get(JAVA_LONG, 0); i++) {
        Native.check((MemorySegment) Native.kiln_backend_name.invokeExact(i, out));
        names.add(Native.string(out.get(ADDRESS, 0)));
      }
      return List.copyOf(names);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /**
   * A custom-call target. {@code out} points at the result's dense row-major data (for a tuple
   * result, at an array of pointers to the leaves' data) and {@code in} at an array of pointers
   * to the operands' data; both are zero-length segments: reinterpret them to the sizes the
   * target knows. It runs on a library thread and must not throw (a throwable is printed and
   * the result left as is).
   */
  @FunctionalInterface
  public interface CustomCallTarget {
    /** Computes the result into {@code out} from the operands behind {@code in}. */
    void call(MemorySegment out, MemorySegment in);
  }

  private static final MethodHandle INVOKE_TARGET;

  static {
    try {
      INVOKE_TARGET =
          MethodHandles.lookup()
              .findStatic(
                  Kiln.class,
                  "invokeTarget",
                  MethodType.methodType(
                      void.class, CustomCallTarget.class, MemorySegment.class, MemorySegment.class));
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // called through INVOKE_TARGET
  private static void invokeTarget(CustomCallTarget target, MemorySegment out, MemorySegment in) {
    try {
      target.call(out, in);
    } catch (Throwable t) {
      t.printStackTrace();
    }
  }

  /**
   * Registers {@code target} as the process-wide custom-call target {@code name}. Another
   * target under a taken name is ALREADY_EXISTS. The target stays alive for the life of the
   * process.
   */
  @SuppressWarnings("restricted") // an upcall stub
  public static void registerCustomCall(String name, CustomCallTarget target) {
    MemorySegment stub =
        Linker.nativeLinker()
            .upcallStub(
                INVOKE_TARGET.bindTo(target),
                FunctionDescriptor.ofVoid(ADDRESS, ADDRESS),
                Arena.global());
    try (Arena arena = Arena.ofConfined()) {
      Native.check(
          (MemorySegment)
              Native.kiln_register_custom_call.invokeExact(arena.allocateFrom(name), stub));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }
}
