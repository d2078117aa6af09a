package dev.kiln;

/** Padding schemes of convolutions and windows (KILN_PADDING_*). */
public enum Padding {
  VALID,
  SAME;

  /** The C value (the constant's position in kiln.h). */
  public int value() {
    return ordinal();
  }
}
