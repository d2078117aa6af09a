package dev.kiln;

import java.time.Duration;

/**
 * Options of {@link Executable#execute(ExecuteOptions, Buffer...)}. Immutable: start from
 * {@link #DEFAULT} and derive with the {@code with*} methods.
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
 */
public record ExecuteOptions(long rngSeed, Duration timeout, Cancellation cancellation) {
  /** The library's defaults (KILN_EXECUTE_OPTIONS_INIT): seed 0, no timeout, no cancellation. */
  public static final ExecuteOptions DEFAULT = new ExecuteOptions(0, null, null);

  /** Options with this rng seed and no timeout or cancellation. */
  public ExecuteOptions(long rngSeed) {
    this(rngSeed, null, null);
  }

  /** These options with {@code rngSeed}. */
  public ExecuteOptions withRngSeed(long rngSeed) {
    return new ExecuteOptions(rngSeed, timeout, cancellation);
  }

  /** These options with {@code timeout} (null: no deadline). */
  public ExecuteOptions withTimeout(Duration timeout) {
    return new ExecuteOptions(rngSeed, timeout, cancellation);
  }

  /** These options with {@code cancellation} (null: none). */
  public ExecuteOptions withCancellation(Cancellation cancellation) {
    return new ExecuteOptions(rngSeed, timeout, cancellation);
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
