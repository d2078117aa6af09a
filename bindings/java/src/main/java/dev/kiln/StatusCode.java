package dev.kiln;

/** The stable numeric status codes of {@code kiln.h} (the canonical set). */
public enum StatusCode {
  OK,
  CANCELLED,
  UNKNOWN,
  INVALID_ARGUMENT,
  DEADLINE_EXCEEDED,
  NOT_FOUND,
  ALREADY_EXISTS,
  PERMISSION_DENIED,
  RESOURCE_EXHAUSTED,
  FAILED_PRECONDITION,
  ABORTED,
  OUT_OF_RANGE,
  UNIMPLEMENTED,
  INTERNAL,
  UNAVAILABLE,
  DATA_LOSS;

  private static final StatusCode[] VALUES = values();

  /** The C value ({@code KILN_STATUS_*}). */
  public int value() {
    return ordinal();
  }

  /** The code with C value {@code value}; {@link #UNKNOWN} for values outside the set. */
  public static StatusCode of(int value) {
    return value >= 0 && value < VALUES.length ? VALUES[value] : UNKNOWN;
  }
}
