package dev.kiln;

/**
 * Dimension numbers of {@link Builder#gather} (XLA GatherDimensionNumbers); null lists are
 * empty.
 *
 * @param offsetDims output dimensions that index into a slice
 * @param collapsedSliceDims slice dimensions of size 1 that are dropped
 * @param startIndexMap the operand dimension each start index applies to
 * @param indexVectorDim the dimension of the start indices holding the index vectors
 * @param operandBatchingDims batching dimensions of the operand
 * @param startIndicesBatchingDims batching dimensions of the start indices
 */
public record GatherDimensionNumbers(
    long[] offsetDims,
    long[] collapsedSliceDims,
    long[] startIndexMap,
    long indexVectorDim,
    long[] operandBatchingDims,
    long[] startIndicesBatchingDims) {}
