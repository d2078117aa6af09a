package dev.kiln;

/**
 * Convolution dimension numbers; the three spatial lists have equal length.
 *
 * @param inputBatchDimension batch dimension of the input
 * @param inputFeatureDimension feature dimension of the input
 * @param inputSpatialDimensions spatial dimensions of the input
 * @param kernelInputFeatureDimension input-feature dimension of the kernel
 * @param kernelOutputFeatureDimension output-feature dimension of the kernel
 * @param kernelSpatialDimensions spatial dimensions of the kernel
 * @param outputBatchDimension batch dimension of the output
 * @param outputFeatureDimension feature dimension of the output
 * @param outputSpatialDimensions spatial dimensions of the output
 */
public record ConvDimensionNumbers(
    long inputBatchDimension,
    long inputFeatureDimension,
    long[] inputSpatialDimensions,
    long kernelInputFeatureDimension,
    long kernelOutputFeatureDimension,
    long[] kernelSpatialDimensions,
    long outputBatchDimension,
    long outputFeatureDimension,
    long[] outputSpatialDimensions) {

  /** NCHW input, OIHW kernel, NCHW output with {@code spatial} spatial dimensions. */
  public static ConvDimensionNumbers nchw(int spatial) {
    long[] dims = new long[spatial];
    for (int i = 0; i < spatial; i++) {
      dims[i] = 2 + i;
    }
    return new ConvDimensionNumbers(0, 1, dims, 1, 0, dims, 0, 1, dims);
  }
}
