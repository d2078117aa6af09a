package dev.kiln;

/**
 * Options of {@link Client#compile(Computation, CompileOptions)}.
 *
 * @param optimizationLevel 0 = only what correctness needs; 2 is the default
 * @param numThreads threads for intra-op parallelism; 0 = one per core
 */
public record CompileOptions(int optimizationLevel, int numThreads) {
  /** The library's defaults (KILN_COMPILE_OPTIONS_INIT). */
  public static final CompileOptions DEFAULT = new CompileOptions(2, 0);
}
