package dev.kiln;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** (e) Two threads executing one executable at once both get the right results. */
class ConcurrencyTest {
  @Test
  void twoThreadsShareOneExecutable() throws Exception {
    int rounds = 500;
    try (Client client = Client.create();
        Computation mlp = MlpBuilderTest.build();
        Executable exe = client.compile(mlp);
        Buffer w1 = client.buffer(MlpBuilderTest.W1, 3, 4);
        Buffer b1 = client.buffer(MlpBuilderTest.B1, 4);
        Buffer w2 = client.buffer(MlpBuilderTest.W2, 4, 2);
        Buffer b2 = client.buffer(MlpBuilderTest.B2, 2)) {
      ExecutorService pool = Executors.newFixedThreadPool(2);
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Integer>> futures = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        final float scale = t == 0 ? 1f : -0.5f; // each thread its own input and answer
        futures.add(
            pool.submit(
                () -> {
                  float[] x = MlpBuilderTest.X.clone();
                  for (int i = 0; i < x.length; i++) {
                    x[i] *= scale;
                  }
                  float[] want = MlpBuilderTest.expected(x);
                  start.await();
                  int done = 0;
                  for (int r = 0; r < rounds; r++) {
                    try (Buffer in = client.buffer(x, 2, 3);
                        Buffer y = exe.execute(in, w1, b1, w2, b2).get(0)) {
                      TestSupport.assertClose(want, y.toFloatArray(), 1e-5, 1e-5);
                      done++;
                    }
                  }
                  return done;
                }));
      }
      start.countDown();
      for (Future<Integer> f : futures) {
        assertEquals(rounds, f.get());
      }
      pool.shutdown();
    }
  }
}
