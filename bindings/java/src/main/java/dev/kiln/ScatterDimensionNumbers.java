package dev.kiln;

/**
 * Dimension numbers of {@link Builder#scatter} (XLA ScatterDimensionNumbers); null lists are
 * empty.
 *
 * @param updateWindowDims update dimensions that are window dimensions
 * @param insertedWindowDims operand dimensions of window size 1 that updates omit
 * @param scatterDimsToOperandDims the operand dimension each scatter index applies to
 * @param indexVectorDim the dimension of the indices holding the index vectors
 * @param inputBatchingDims batching dimensions of the operands
 * @param scatterIndicesBatchingDims batching dimensions of the indices
 */
public record ScatterDimensionNumbers(
    long[] updateWindowDims,
    long[] insertedWindowDims,
    long[] scatterDimsToOperandDims,
    long indexVectorDim,
    long[] inputBatchingDims,
    long[] scatterIndicesBatchingDims) {}
