"""(b) HLO text modules of the conformance corpus, with their .npy inputs."""

import numpy as np
import pytest

import kiln
from conftest import CORPUS

PROGRAMS = ["mlp_forward", "mlp_train_step_sgd", "x64_mlp_train_step"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_corpus_program(client, name):
    directory = CORPUS / name
    if not directory.is_dir():
        pytest.skip(f"{directory} is not in this checkout")
    with kiln.Computation.from_hlo_file(directory / "module.hlo") as computation:
        exe = client.compile(computation)
    with exe:
        inputs = sorted(directory.glob("in*.npy"), key=lambda p: int(p.stem[2:]))
        expected = sorted(directory.glob("out*.npy"), key=lambda p: int(p.stem[3:]))
        assert exe.parameter_count == len(inputs)
        assert exe.result_count == len(expected)
        # Inputs read by the library itself, as the parameters' element types.
        args = [client.buffer_from_npy(p, exe.parameter_type(i)) for i, p in enumerate(inputs)]
        results = exe.execute(args)
        for got, path in zip(results, expected):
            want = np.load(path)
            with got:
                array = got.to_numpy()
            assert array.dtype == want.dtype and array.shape == want.shape, path.name
            if np.issubdtype(want.dtype, np.floating):
                np.testing.assert_allclose(array, want, rtol=1e-4, atol=1e-5, err_msg=path.name)
            else:
                np.testing.assert_array_equal(array, want, err_msg=path.name)
        # The same through NumPy arrays in and out.
        outputs = exe(*[np.load(p) for p in inputs])
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        for array, path in zip(outputs, expected):
            np.testing.assert_allclose(array, np.load(path), rtol=1e-4, atol=1e-5)
        for a in args:
            a.close()


def test_npy_round_trip(client, tmp_path):
    array = np.arange(12, dtype=np.int16).reshape(3, 4)
    with client.buffer(array) as buffer:
        buffer.to_npy(tmp_path / "a.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), array)
    with client.buffer_from_npy(tmp_path / "a.npy") as again:
        assert again.element_type == kiln.ElementType.S16
        np.testing.assert_array_equal(again.to_numpy(), array)
