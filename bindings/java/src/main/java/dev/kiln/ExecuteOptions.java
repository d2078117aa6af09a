package dev.kiln;

/**
 * Options of {@link Executable#execute(ExecuteOptions, Buffer...)}.
 *
 * @param rngSeed seed of the rng ops: equal seeds give equal numbers
 */
public record ExecuteOptions(long rngSeed) {
  /** The library's defaults (KILN_EXECUTE_OPTIONS_INIT). */
  public static final ExecuteOptions DEFAULT = new ExecuteOptions(0);
}
