package dev.kiln;

/**
 * Dimension numbers of {@link Builder#dotGeneral} (XLA DotDimensionNumbers).
 *
 * @param lhsContractingDimensions contracting dimensions of the left operand
 * @param rhsContractingDimensions contracting dimensions of the right operand
 * @param lhsBatchDimensions batch dimensions of the left operand
 * @param rhsBatchDimensions batch dimensions of the right operand
 */
public record DotDimensionNumbers(
    long[] lhsContractingDimensions,
    long[] rhsContractingDimensions,
    long[] lhsBatchDimensions,
    long[] rhsBatchDimensions) {

  /** Contracting dimensions only, no batch dimensions. */
  public static DotDimensionNumbers contracting(long[] lhs, long[] rhs) {
    return new DotDimensionNumbers(lhs, rhs, new long[0], new long[0]);
  }
}
