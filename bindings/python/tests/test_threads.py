"""(e) Two threads run the same executable at once (ctypes drops the GIL in calls)."""

import threading

import numpy as np

import kiln


def test_two_threads_execute_one_executable(client):
    with kiln.Builder("affine") as b:
        x = b.parameter(0, "f32", [64, 64])
        w = b.parameter(1, "f32", [64, 64])
        computation = b.build(b.tanh(x @ w) + 1.0)
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    inputs = [rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2)]
    expected = [np.tanh(x @ w) + 1.0 for x in inputs]
    errors = []
    barrier = threading.Barrier(2)

    with computation, client.compile(computation) as exe, client.buffer(w) as w_buffer:

        def worker(i):
            try:
                x_buffer = client.buffer(inputs[i])
                barrier.wait()
                for _ in range(50):
                    (result,) = exe.execute([x_buffer, w_buffer])
                    with result:
                        np.testing.assert_allclose(result.to_numpy(), expected[i], rtol=1e-5, atol=1e-5)
                x_buffer.close()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
