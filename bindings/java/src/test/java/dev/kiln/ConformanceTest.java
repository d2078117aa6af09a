package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** (b) HLO text modules of the conformance corpus with their .npy inputs and outputs. */
class ConformanceTest {
  @ParameterizedTest
  @ValueSource(strings = {"mlp_forward", "mlp_train_step_sgd"})
  void corpusProgramMatchesExpectedOutputs(String name) {
    Path dir = TestSupport.corpus().resolve(name);
    try (Client client = Client.create();
        Computation module = Computation.fromHloFile(dir.resolve("module.hlo"));
        Executable exe = client.compile(module)) {
      List<Buffer> inputs = new ArrayList<>();
      for (int i = 0; i < exe.parameterCount(); i++) {
        inputs.add(client.readNpy(dir.resolve("in" + i + ".npy"), exe.parameterType(i)));
      }
      List<Buffer> results = exe.execute(inputs.toArray(Buffer[]::new));
      assertEquals(exe.resultCount(), results.size());
      for (int i = 0; i < results.size(); i++) {
        Path file = dir.resolve("out" + i + ".npy");
        assertTrue(Files.exists(file), file.toString());
        try (Buffer expected = client.readNpy(file)) {
          Buffer actual = results.get(i);
          assertEquals(expected.shape(), actual.shape(), "result " + i);
          TestSupport.assertClose(expected.toFloatArray(), actual.toFloatArray(), 1e-5, 1e-4);
        }
      }
    }
  }
}
