package dev.kiln;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;

/**
 * Options of {@link Executable#execute(ExecuteOptions, Buffer...)} and {@link
 * Executable#executeAsync(ExecuteOptions, Buffer...)}. Immutable: start from {@link #DEFAULT}
 * and derive with the {@code with*} methods.
 *
 * <pre>{@code
 * ExecuteOptions options =
 *     ExecuteOptions.DEFAULT.withTimeout(Duration.ofSeconds(5)).withCancellation(cancellation);
 * }</pre>
 *
 * @param rngSeed seed of the rng ops: equal seeds give equal numbers
 * @param timeout null (no deadline), or how long the execution may run: once it has passed,
 *     execute throws {@link KilnException} with {@link StatusCode#DEADLINE_EXCEEDED}, even from
 *     a {@code while} loop that never ends. Zero or negative is INVALID_ARGUMENT when executing
 *     (a negative one is the library's error); one beyond {@code Long.MAX_VALUE} nanoseconds
 *     (292 years) is cut to that.
 * @param cancellation null, or a {@link Cancellation} whose {@link Cancellation#cancel()} makes
 *     execute throw {@link KilnException} with {@link StatusCode#CANCELLED}. Borrowed: the
 *     caller keeps owning it and keeps it open while executions use it.
 * @param device null, or the device of the executable's client to run on (null: the first
 *     argument's device, or the client's first device without arguments). Every argument must
 *     live on it (else INVALID_ARGUMENT), and the results are made on it.
 * @param donatedArguments indices of arguments donated to the execution (XLA's donate_argnums;
 *     never null, empty for none): their buffers may afterwards only be closed, and any other
 *     use throws {@link StatusCode#FAILED_PRECONDITION}. An index out of range or repeated is
 *     INVALID_ARGUMENT, and a failed call donates nothing.
 */
public record ExecuteOptions(
    long rngSeed,
    Duration timeout,
    Cancellation cancellation,
    Device device,
    List<Integer> donatedArguments) {
  /**
   * The library's defaults (KILN_EXECUTE_OPTIONS_INIT): seed 0, no timeout, no cancellation, the
   * first argument's device, nothing donated.
   */
  public static final ExecuteOptions DEFAULT = new ExecuteOptions(0, null, null, null, List.of());

  /** Copies {@code donatedArguments} (null: none). */
  public ExecuteOptions {
    donatedArguments = donatedArguments == null ? List.of() : List.copyOf(donatedArguments);
  }

  /** Options with these fields, the default device and nothing donated. */
  public ExecuteOptions(long rngSeed, Duration timeout, Cancellation cancellation) {
    this(rngSeed, timeout, cancellation, null, List.of());
  }

  /** Options with this rng seed and no timeout or cancellation. */
  public ExecuteOptions(long rngSeed) {
    this(rngSeed, null, null);
  }

  /** These options with {@code rngSeed}. */
  public ExecuteOptions withRngSeed(long rngSeed) {
    return new ExecuteOptions(rngSeed, timeout, cancellation, device, donatedArguments);
  }

  /** These options with {@code timeout} (null: no deadline). */
  public ExecuteOptions withTimeout(Duration timeout) {
    return new ExecuteOptions(rngSeed, timeout, cancellation, device, donatedArguments);
  }

  /** These options with {@code cancellation} (null: none). */
  public ExecuteOptions withCancellation(Cancellation cancellation) {
    return new ExecuteOptions(rngSeed, timeout, cancellation, device, donatedArguments);
  }

  /** These options running on {@code device} (null: the first argument's). */
  public ExecuteOptions withDevice(Device device) {
    return new ExecuteOptions(rngSeed, timeout, cancellation, device, donatedArguments);
  }

  /** These options donating the arguments at {@code indices} (none: donate nothing). */
  public ExecuteOptions withDonatedArguments(int... indices) {
    List<Integer> list = java.util.Arrays.stream(indices).boxed().toList();
    return new ExecuteOptions(rngSeed, timeout, cancellation, device, list);
  }

  /** The C struct, in {@code arena}. */
  MemorySegment toNative(Arena arena) {
    MemorySegment donated = MemorySegment.NULL;
    if (!donatedArguments.isEmpty()) {
      donated = arena.allocate(JAVA_LONG, donatedArguments.size());
      for (int i = 0; i < donatedArguments.size(); i++) {
        // size_t: a negative index reaches the library as a huge one, which it refuses.
        donated.setAtIndex(JAVA_LONG, i, donatedArguments.get(i));
      }
    }
    return new Struct(arena, Struct.EXECUTE_OPTIONS)
        .set("rng_seed", rngSeed)
        .set("timeout_ns", timeoutNanos())
        .set("cancellation", cancellation == null ? MemorySegment.NULL : cancellation.handle())
        .set("device", device == null ? MemorySegment.NULL : device.handle())
        .set("donated_arguments", donated)
        .set("num_donated_arguments", donatedArguments.size())
        .segment;
  }

  /** {@code timeout_ns} of the C struct: 0 for none, the nanoseconds (saturated) otherwise. */
  long timeoutNanos() {
    if (timeout == null) {
      return 0;
    }
    if (timeout.isZero()) {
      // Refused here: the C API reads 0 as "no deadline", the opposite of what was asked.
      throw new KilnException(
          StatusCode.INVALID_ARGUMENT,
          "execute: timeout must be positive, got " + timeout + " (null means no deadline)");
    }
    try {
      return timeout.toNanos();
    } catch (ArithmeticException tooLong) {
      // Keeps the sign, so that a huge negative timeout still reaches the library as negative.
      return timeout.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }
}
