package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
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

  /**
   * The reverse-mode derivative (vector-Jacobian product) as a new computation ({@code
   * kiln_computation_vjp}). It takes this computation's parameters, then, unless the result is one
   * float scalar (whose cotangent is 1), one cotangent per result leaf; it returns the result
   * leaves followed by the gradient for each parameter number of {@code wrt}, in that order. A
   * bad or repeated number, an integer parameter or an op without a derivative is a {@link
   * KilnException} (INVALID_ARGUMENT or UNIMPLEMENTED) naming it. The caller closes the result.
   */
  public Computation grad(long... wrt) {
    return gradient(Native.kiln_computation_vjp, wrt);
  }

  /**
   * For a scalar loss: a computation with the same parameters returning the loss followed by its
   * gradient for each parameter number of {@code wrt} ({@code kiln_computation_value_and_grad}).
   * The caller closes the result.
   */
  public Computation valueAndGrad(long... wrt) {
    return gradient(Native.kiln_computation_value_and_grad, wrt);
  }

  /**
   * Forward-mode derivative (Jacobian-vector product) as a new computation ({@code
   * kiln_computation_jvp}). It takes this computation's parameters, then one tangent per parameter
   * number of {@code wrt} (in that order, each of its parameter's shape); it returns the result
   * leaves followed by the tangent of each result leaf (zeros for integer leaves). A bad or
   * repeated number, an integer parameter or an op without a derivative is a {@link
   * KilnException} (INVALID_ARGUMENT or UNIMPLEMENTED) naming it. The caller closes the result.
   */
  public Computation jvp(long... wrt) {
    return gradient(Native.kiln_computation_jvp, wrt);
  }

  private Computation gradient(MethodHandle call, long[] wrt) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = Native.outPointer(arena);
      long count = wrt == null ? 0 : wrt.length;
      Native.check(
          (MemorySegment) call.invokeExact(handle(), Native.longs(arena, wrt), count, out));
      return new Computation(out.get(ADDRESS, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  @Override
  public String toString() {
    return isClosed() ? "Computation[closed]" : toHloText();
  }
}
