package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

final class TestSupport {
  private TestSupport() {}

  /** tests/conformance/corpus of this repository (set by the pom). */
  static Path corpus() {
    return Path.of(System.getProperty("kiln.corpus", "../../tests/conformance/corpus"));
  }

  /** The text of a file in bindings/testdata, the bindings' shared test data (set by the pom). */
  static String readTestdata(String name) {
    try {
      return Files.readString(
          Path.of(System.getProperty("kiln.testdata", "../testdata")).resolve(name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Resident set size of this process in KiB, from /proc/self/status. */
  static long residentKib() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    throw new IllegalStateException("no VmRSS in /proc/self/status");
  }

  static void assertClose(float[] expected, float[] actual, double atol, double rtol) {
    assertEquals(expected.length, actual.length, "element count");
    for (int i = 0; i < expected.length; i++) {
      double diff = Math.abs((double) expected[i] - actual[i]);
      if (diff > atol + rtol * Math.abs(expected[i])) {
        fail("element " + i + ": expected " + expected[i] + ", got " + actual[i]);
      }
    }
  }
}
