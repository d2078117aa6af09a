package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * CompileOptions.allowUnsafeNanMath reaches the library: devices that keep NaN (the interpreter,
 * lavapipe) compile with it and without it and give NaN-exact results. The refusal on a device
 * without float controls is tested in C++ (tests/vulkan/nan_refusal_test.cc fakes such a device).
 */
class NanOptInTest {
  /** x != x: true exactly for NaN, what a driver assuming no NaN may fold. */
  static void checkOptIn(Client client) {
    try (Builder b = Builder.create("nan_test")) {
      Op x = b.parameter(0, Shape.of(ElementType.F32, 4), "x");
      try (Computation computation = b.build(b.ne(x, x));
          Buffer input =
              client.buffer(new float[] {1f, Float.NaN, Float.POSITIVE_INFINITY, -0f}, 4)) {
        for (CompileOptions options :
            List.of(CompileOptions.DEFAULT, CompileOptions.DEFAULT.withAllowUnsafeNanMath(true))) {
          try (Executable exe = client.compile(computation, options);
              Buffer result = exe.execute(input).get(0)) {
            assertArrayEquals(
                new boolean[] {false, true, false, false},
                result.toBooleanArray(),
                options.toString());
          }
        }
      }
    }
  }

  @Test
  void defaultsOff() {
    assertFalse(CompileOptions.DEFAULT.allowUnsafeNanMath());
    assertFalse(new CompileOptions(1, 2).allowUnsafeNanMath());
    assertTrue(CompileOptions.DEFAULT.withAllowUnsafeNanMath(true).allowUnsafeNanMath());
  }

  @Test
  void acceptedOnTheInterpreter() {
    try (Client client = Client.create("interpreter")) {
      checkOptIn(client);
    }
  }

  @Test
  void acceptedOnVulkan() {
    assumeTrue(Kiln.backends().contains("vulkan"), "this libkiln has no vulkan backend");
    Client client;
    try {
      client = Client.create("vulkan");
    } catch (KilnException e) {
      assumeTrue(false, "no vulkan device here: " + e.getMessage());
      return;
    }
    try (client) {
      checkOptIn(client);
    }
  }
}
