package dev.kiln;

/**
 * Options of {@link Client#compile(Computation, CompileOptions)}.
 *
 * @param optimizationLevel 0 = only what correctness needs; 2 is the default
 * @param numThreads threads for intra-op parallelism; 0 = one per core
 * @param allowUnsafeNanMath true compiles a computation whose results depend on NaN or
 *     infinities even for a device whose driver may assume there are none (vulkan without float
 *     controls), which refuses it otherwise as UNIMPLEMENTED: such results may then be wrong;
 *     false (the default) refuses
 */
public record CompileOptions(int optimizationLevel, int numThreads, boolean allowUnsafeNanMath) {
  /** The library's defaults (KILN_COMPILE_OPTIONS_INIT). */
  public static final CompileOptions DEFAULT = new CompileOptions(2, 0, false);

  /** The given level and threads, NaN-unsafe compiles refused (the default). */
  public CompileOptions(int optimizationLevel, int numThreads) {
    this(optimizationLevel, numThreads, false);
  }

  /** These options with {@code allowUnsafeNanMath} set as given. */
  public CompileOptions withAllowUnsafeNanMath(boolean allow) {
    return new CompileOptions(optimizationLevel, numThreads, allow);
  }
}
