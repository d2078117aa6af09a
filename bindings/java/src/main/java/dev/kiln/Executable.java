package dev.kiln;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * A computation compiled for a client's backend, owned by that {@link Client}. Thread-safe:
 * several threads may execute it at once.
 */
public final class Executable extends NativeHandle {
  private final Client client;
  private final long resultCount;

  Executable(Client client, MemorySegment handle) {
    super(handle);
    this.client = client;
    client.adopt(this);
    this.resultCount = count(Native.kiln_executable_result_count);
  }

  @Override
  void destroy(MemorySegment h) throws Throwable {
    Native.kiln_executable_destroy.invokeExact(h);
  }

  @Override
  void closed() {
    client.release(this);
  }

  private long count(java.lang.invoke.MethodHandle query) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_LONG);
      Native.check((MemorySegment) query.invokeExact(handle(), out));
      return out.get(JAVA_LONG, 0);
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** The number of arguments execute takes (array leaves of the parameters). */
  public long parameterCount() {
    return count(Native.kiln_executable_parameter_count);
  }

  /** The number of buffers execute returns (array leaves of the result). */
  public long resultCount() {
    return resultCount;
  }

  /** The element type of argument {@code index}; OUT_OF_RANGE past the end. */
  public ElementType parameterType(long index) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      Native.check(
          (MemorySegment) Native.kiln_executable_parameter_type.invokeExact(handle(), index, out));
      return ElementType.of(out.get(JAVA_INT, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Runs once with the default options; see {@link #execute(ExecuteOptions, Buffer...)}. */
  public List<Buffer> execute(Buffer... arguments) {
    return execute(ExecuteOptions.DEFAULT, arguments);
  }

  /**
   * Runs once on {@code arguments} (in parameter order, tuples flattened; only read) and
   * returns the result leaves in order. The caller owns the results and closes them (closing
   * the client also does).
   *
   * <p>Blocks the calling thread until the computation ends, or until {@code options}' timeout
   * passes ({@link KilnException} with {@link StatusCode#DEADLINE_EXCEEDED}) or its {@link
   * Cancellation} is cancelled from another thread ({@link StatusCode#CANCELLED}; at once if it
   * already is). A stopped run returns no results and leaves this executable, its client and
   * {@code arguments} usable. A zero or negative timeout is INVALID_ARGUMENT; a closed
   * cancellation is an {@link IllegalStateException}.
   *
   * <p>It runs on {@code options}' {@link ExecuteOptions#device() device} (null: the first
   * argument's, or the client's first device), where every argument must live (else
   * INVALID_ARGUMENT; {@link Buffer#copyTo(Device)} moves one) and the results are made. The
   * {@link ExecuteOptions#donatedArguments() donated} arguments may afterwards only be closed:
   * any other use throws {@link StatusCode#FAILED_PRECONDITION}.
   */
  public List<Buffer> execute(ExecuteOptions options, Buffer... arguments) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment args = arguments(arena, arguments);
      MemorySegment opts = options.toNative(arena);
      MemorySegment results = arena.allocate(ADDRESS, Math.max(1, resultCount));
      MemorySegment count = arena.allocate(JAVA_LONG);
      Native.check(
          (MemorySegment)
              Native.kiln_executable_execute.invokeExact(
                  handle(),
                  args,
                  (long) arguments.length,
                  opts,
                  results,
                  resultCount,
                  count));
      return results(results, count.get(JAVA_LONG, 0));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  /** Starts one run with the default options; see {@link #executeAsync(ExecuteOptions, Buffer...)}. */
  public Execution executeAsync(Buffer... arguments) {
    return executeAsync(ExecuteOptions.DEFAULT, arguments);
  }

  /**
   * As {@link #execute(ExecuteOptions, Buffer...)} without waiting ({@code
   * kiln_executable_execute_async}): errors in the arguments or options throw at once; otherwise
   * the result buffers and a completion event are returned while the run goes on in the
   * library's worker threads. It starts once every argument is ready, so runs chain: a result
   * may be passed to the next call at once. A failure of the run (a stop, an error, a failed
   * argument) shows in {@link Execution#await()}, {@link Execution#future()}, the results'
   * {@link Buffer#readyEvent() ready events} and when reading a result, as a {@link
   * KilnException}. The arguments, this executable and the client may be closed at once.
   */
  public Execution executeAsync(ExecuteOptions options, Buffer... arguments) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment args = arguments(arena, arguments);
      MemorySegment opts = options.toNative(arena);
      MemorySegment results = arena.allocate(ADDRESS, Math.max(1, resultCount));
      MemorySegment count = arena.allocate(JAVA_LONG);
      MemorySegment event = Native.outPointer(arena);
      Native.check(
          (MemorySegment)
              Native.kiln_executable_execute_async.invokeExact(
                  handle(),
                  args,
                  (long) arguments.length,
                  opts,
                  results,
                  resultCount,
                  count,
                  event));
      List<Buffer> out = results(results, count.get(JAVA_LONG, 0));
      return new Execution(out, new Event(event.get(ADDRESS, 0)));
    } catch (Throwable t) {
      throw Native.unexpected(t);
    }
  }

  private static MemorySegment arguments(Arena arena, Buffer[] arguments) {
    MemorySegment args = arena.allocate(ADDRESS, Math.max(1, arguments.length));
    for (int i = 0; i < arguments.length; i++) {
      args.setAtIndex(ADDRESS, i, arguments[i].handle());
    }
    return args;
  }

  private List<Buffer> results(MemorySegment results, long n) {
    List<Buffer> out = new ArrayList<>((int) n);
    for (long i = 0; i < n; i++) {
      out.add(new Buffer(client, results.getAtIndex(ADDRESS, i)));
    }
    return out;
  }
}
