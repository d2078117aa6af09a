package dev.kiln;

/** Algorithms of Builder.rngBitGenerator (KILN_RNG_*). */
public enum RngAlgorithm {
  DEFAULT,
  THREE_FRY,
  PHILOX;

  /** The C value (the constant's position in kiln.h). */
  public int value() {
    return ordinal();
  }
}
