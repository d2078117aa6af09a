package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** (c) Library errors surface as KilnException with the C code and message intact. */
class ErrorTest {
  @Test
  void shapeErrorIsInvalidArgumentNamingTheOp() {
    try (Builder b = Builder.create("bad")) {
      Op two = b.parameter(0, Shape.of(ElementType.F32, 2));
      Op three = b.parameter(1, Shape.of(ElementType.F32, 3));
      KilnException e = assertThrows(KilnException.class, () -> b.add(two, three));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      assertEquals(3, e.code().value());
      assertTrue(e.getMessage().contains("add"), e.getMessage());
      assertTrue(e.toString().contains("INVALID_ARGUMENT"), e.toString());
      // The error is sticky: queryable at once, and build reports it too.
      assertEquals(e.getMessage(), b.firstError().orElseThrow().getMessage());
      KilnException atBuild = assertThrows(KilnException.class, b::build);
      assertEquals(StatusCode.INVALID_ARGUMENT, atBuild.code());
      assertEquals(e.getMessage(), atBuild.getMessage());
    }
  }

  @Test
  void operandPrecisionReachesTheModuleAndOnlyDotsAndConvolutionsTakeIt() {
    try (Builder b = Builder.create("precision")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32, 2, 3));
      Op w = b.parameter(1, Shape.of(ElementType.F32, 3, 4));
      Op product = b.setPrecision(b.dot(x, w), Precision.HIGHEST, Precision.DEFAULT);
      try (Computation computation = b.build(product)) {
        String text = computation.toHloText();
        assertTrue(text.contains("operand_precision={highest,default}"), text);
      }
      Op sum = b.add(x, x);
      KilnException e =
          assertThrows(
              KilnException.class, () -> b.setPrecision(sum, Precision.HIGH, Precision.HIGH));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("only dot and convolution"), e.getMessage());
    }
  }

  @Test
  void fftRunsAndRefusesRealNumbersForAComplexTransform() {
    float[] signal = new float[16];
    for (int i = 0; i < signal.length; ++i) {
      signal[i] = i * 0.5f - 3f;
    }
    try (Builder b = Builder.create("fft")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32, 2, 8));
      long[] eight = {8};
      Op back = b.fft(b.fft(x, FftType.RFFT, eight), FftType.IRFFT, eight);
      try (Client client = Client.create();
          Computation computation = b.build(back);
          Executable exe = client.compile(computation);
          Buffer input = client.buffer(signal, 2, 8)) {
        String text = computation.toHloText();
        assertTrue(text.contains("fft_type=RFFT, fft_length={8}"), text);
        try (Buffer y = exe.execute(input).get(0)) {
          TestSupport.assertClose(signal, y.toFloatArray(), 1e-5, 1e-5);
        }
      }
      KilnException e = assertThrows(KilnException.class, () -> b.fft(x, FftType.FFT, eight));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("fft: FFT needs a complex"), e.getMessage());
    }
  }

  @Test
  void hloParseErrorIsInvalidArgument() {
    KilnException e =
        assertThrows(KilnException.class, () -> Computation.fromHloText("HloModule broken\n{"));
    assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
    assertTrue(!e.getMessage().isEmpty());
  }

  @Test
  void unknownBackendIsNotFound() {
    KilnException e = assertThrows(KilnException.class, () -> Client.create("no-such-backend"));
    assertEquals(StatusCode.NOT_FOUND, e.code());
  }

  @Test
  void bufferSizeMismatchIsInvalidArgument() {
    try (Client client = Client.create()) {
      KilnException e =
          assertThrows(KilnException.class, () -> client.buffer(new float[] {1, 2, 3}, 2, 2));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
    }
  }

  @Test
  void missingNpyFileIsNotFound() {
    try (Client client = Client.create()) {
      KilnException e =
          assertThrows(
              KilnException.class,
              () -> client.readNpy(java.nio.file.Path.of("/nonexistent/kiln.npy")));
      assertEquals(StatusCode.NOT_FOUND, e.code());
    }
  }

  @Test
  void wrongReadbackTypeAndUseAfterCloseAreJavaErrors() {
    try (Client client = Client.create()) {
      Buffer b = client.buffer(new int[] {1}, 1);
      assertThrows(IllegalStateException.class, b::toFloatArray);
      b.close();
      b.close(); // idempotent
      assertTrue(b.isClosed());
      assertThrows(IllegalStateException.class, b::toIntArray);
      try (Buffer scalar =
          client.buffer(ElementType.F32, MemorySegment.ofArray(new float[1]), new long[0], null)) {
        KilnException e =
            assertThrows(
                KilnException.class, () -> scalar.copyTo(MemorySegment.ofArray(new byte[3])));
        assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      }
    }
  }

  @Test
  void opsOfAnotherBuilderAreInvalidArgument() {
    try (Builder first = Builder.create("first");
        Builder second = Builder.create("second")) {
      Op x = first.parameter(0, Shape.of(ElementType.F32));
      Op y = second.parameter(0, Shape.of(ElementType.F32));
      KilnException e = assertThrows(KilnException.class, () -> second.add(x, y));
      assertEquals(StatusCode.INVALID_ARGUMENT, e.code());
      for (String needle :
          new String[] {"kiln_op_add: operand 'lhs'", "builder 'first'", "not of builder 'second'"}) {
        assertTrue(e.getMessage().contains(needle), e.getMessage());
      }
      KilnException atBuild = assertThrows(KilnException.class, () -> first.build(y));
      assertEquals(StatusCode.INVALID_ARGUMENT, atBuild.code());
      assertTrue(
          atBuild.getMessage().contains("kiln_builder_build: argument 'root'"), atBuild.getMessage());
      try (Computation own = first.build(x)) {
        assertEquals(1, own.parameterCount());
      }
    }
  }
}
