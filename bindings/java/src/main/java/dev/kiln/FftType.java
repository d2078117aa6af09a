package dev.kiln;

/**
 * The transform of {@link Builder#fft} (KILN_FFT_*, XLA's FftType): FFT and IFFT map complex
 * numbers to complex numbers (the inverse scaled by 1/N); RFFT takes real numbers to the {@code
 * fftLength[last]/2+1} lowest frequencies of the last dimension and IRFFT takes those back to real
 * numbers (scaled by 1/N).
 */
public enum FftType {
  FFT,
  IFFT,
  RFFT,
  IRFFT;

  /** The C value (the constant's position in kiln.h). */
  public int value() {
    return ordinal();
  }
}
