package dev.kiln;

/** Comparison types of Builder.compare (KILN_COMPARISON_TYPE_*); DEFAULT picks by element type. */
public enum ComparisonType {
  DEFAULT,
  FLOAT,
  TOTAL_ORDER,
  SIGNED,
  UNSIGNED;

  /** The C value (the constant's position in kiln.h). */
  public int value() {
    return ordinal();
  }
}
