package dev.kiln;

/** Directions of Builder.compare (KILN_COMPARE_*). */
public enum ComparisonDirection {
  EQ,
  NE,
  GE,
  GT,
  LE,
  LT;

  /** The C value (the constant's position in kiln.h). */
  public int value() {
    return ordinal();
  }
}
