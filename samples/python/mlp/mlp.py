"""A two-layer perceptron built with Kiln's builder and run on the default backend.

    KILN_LIBRARY_PATH=build/release/capi PYTHONPATH=bindings/python/src python3 samples/python/mlp/mlp.py

(from the repository root, with NumPy installed; after `pip install ./bindings/python`
and with libkiln installed, plain `python3 samples/python/mlp/mlp.py` works too).
"""

import numpy as np

import kiln

BATCH, IN, HIDDEN, OUT = 8, 16, 32, 4


def build_mlp() -> kiln.Computation:
    """logits = relu(x @ w1 + b1) @ w2 + b2"""
    with kiln.Builder("mlp") as b:
        x = b.parameter(0, "f32", [BATCH, IN], "x")
        w1 = b.parameter(1, "f32", [IN, HIDDEN], "w1")
        b1 = b.parameter(2, "f32", [HIDDEN], "b1")
        w2 = b.parameter(3, "f32", [HIDDEN, OUT], "w2")
        b2 = b.parameter(4, "f32", [OUT], "b2")
        hidden = b.max(b.add(x @ w1, b1, broadcast_dimensions=[1]), b.constant_f32(0.0))
        return b.build(b.add(hidden @ w2, b2, broadcast_dimensions=[1]))


def main() -> None:
    rng = np.random.default_rng(42)
    w1 = rng.normal(0, IN**-0.5, (IN, HIDDEN)).astype(np.float32)
    b1 = np.zeros(HIDDEN, np.float32)
    w2 = rng.normal(0, HIDDEN**-0.5, (HIDDEN, OUT)).astype(np.float32)
    b2 = np.full(OUT, 0.1, np.float32)

    with kiln.Client() as client, build_mlp() as computation:
        print(f"kiln {kiln.version()} on {client.backend} ({client.devices[0]})")
        with client.compile(computation) as mlp:
            # The weights stay on the device; each batch is copied in per call.
            weights = [client.buffer(a) for a in (w1, b1, w2, b2)]
            for step in range(3):
                x = rng.standard_normal((BATCH, IN)).astype(np.float32)
                logits = mlp(x, *weights)
                reference = np.maximum(x @ w1 + b1, 0) @ w2 + b2
                error = float(np.max(np.abs(logits - reference)))
                predictions = logits.argmax(axis=1).tolist()
                print(f"batch {step}: predictions {predictions}  max |kiln - numpy| = {error:.1e}")
                assert error < 1e-4, "kiln and NumPy disagree"
            for w in weights:
                w.close()
    print("ok")


if __name__ == "__main__":
    main()
