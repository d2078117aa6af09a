"""Builder.fft against numpy.fft, and its refusals."""

import numpy as np
import pytest

import kiln


def test_fft_types_match_numpy(client):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 6, 10)).astype(np.float32)
    z = (rng.standard_normal((3, 6, 10)) + 1j * rng.standard_normal((3, 6, 10))).astype(np.complex64)
    with kiln.Builder("fft") as b:
        real = b.parameter(0, "f32", [3, 6, 10])
        cplx = b.parameter(1, "c64", [3, 6, 10])
        spectrum = b.fft(real, "rfft", [6, 10])
        outputs = [
            spectrum,
            b.fft(spectrum, kiln.FftType.IRFFT, [6, 10]),
            b.fft(cplx, "fft", [10]),
            b.fft(cplx, "ifft", [3, 6, 10]),
        ]
        computation = b.build(b.tuple(outputs))
    assert "fft_type=RFFT, fft_length={6,10}" in computation.to_hlo_text()
    with computation, client.compile(computation) as exe:
        got = exe(x, z)
    expected = [np.fft.rfft2(x), x, np.fft.fft(z), np.fft.ifftn(z)]
    for value, want in zip(got, expected):
        assert value.shape == want.shape
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-5)


def test_fft_refuses_real_numbers_for_a_complex_transform():
    with kiln.Builder("fft_of_reals") as b:
        x = b.parameter(0, "f32", [8])
        with pytest.raises(kiln.KilnError, match="fft: FFT needs a complex") as error:
            b.fft(x, "fft", [8])
    assert error.value.code == kiln.StatusCode.INVALID_ARGUMENT
