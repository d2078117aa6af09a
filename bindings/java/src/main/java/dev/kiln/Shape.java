package dev.kiln;

import java.util.Arrays;
import java.util.stream.Collectors;

/** An array shape: an element type and dimensions (row-major unless a layout says otherwise). */
public final class Shape {
  private final ElementType elementType;
  private final long[] dimensions;

  private Shape(ElementType elementType, long[] dimensions) {
    this.elementType = java.util.Objects.requireNonNull(elementType, "elementType");
    this.dimensions = dimensions.clone();
  }

  /** The shape {@code elementType[dimensions...]}; no dimensions is a scalar. */
  public static Shape of(ElementType elementType, long... dimensions) {
    return new Shape(elementType, dimensions);
  }

  /** The element type. */
  public ElementType elementType() {
    return elementType;
  }

  /** A copy of the dimensions. */
  public long[] dimensions() {
    return dimensions.clone();
  }

  /** The number of dimensions. */
  public int rank() {
    return dimensions.length;
  }

  /** The product of the dimensions (1 for a scalar). */
  public long elementCount() {
    long n = 1;
    for (long d : dimensions) {
      n = Math.multiplyExact(n, d);
    }
    return n;
  }

  long[] dims() {
    return dimensions;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Shape s
        && s.elementType == elementType
        && Arrays.equals(s.dimensions, dimensions);
  }

  @Override
  public int hashCode() {
    return 31 * elementType.hashCode() + Arrays.hashCode(dimensions);
  }

  /** HLO notation, e.g. {@code f32[2,3]}. */
  @Override
  public String toString() {
    return elementType.name().toLowerCase(java.util.Locale.ROOT)
        + Arrays.stream(dimensions)
            .mapToObj(Long::toString)
            .collect(Collectors.joining(",", "[", "]"));
  }
}
