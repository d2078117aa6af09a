package dev.kiln;

/**
 * A failure reported by libkiln: the C status code and its message, unchanged.
 *
 * <p>{@link #getMessage()} is the library's message as is; {@link #toString()} adds the code.
 */
public final class KilnException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final StatusCode code;

  /** A failure with the given code and message. */
  public KilnException(StatusCode code, String message) {
    super(message);
    this.code = code;
  }

  /** The status code. */
  public StatusCode code() {
    return code;
  }

  @Override
  public String toString() {
    return "KilnException[" + code + "]: " + getMessage();
  }
}
