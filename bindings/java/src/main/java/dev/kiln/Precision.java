package dev.kiln;

/**
 * Operand precision of a dot or convolution (KILN_PRECISION_*, XLA's precision config): DEFAULT
 * lets the backend use faster algorithms (Winograd convolutions on the CPU); HIGH and HIGHEST keep
 * the plain sum of products.
 */
public enum Precision {
  DEFAULT,
  HIGH,
  HIGHEST;

  /** The C value (the constant's position in kiln.h). */
  public int value() {
    return ordinal();
  }
}
