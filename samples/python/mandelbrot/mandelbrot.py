"""A zoom into the Mandelbrot set, one Kiln execution per frame, written as PNG files.

    KILN_LIBRARY_PATH=build/release/capi PYTHONPATH=bindings/python/src \\
        python3 samples/python/mandelbrot/mandelbrot.py [--backend NAME] [--frames N] [--size WxH]
                                                        [--output-dir DIR]

(from the repository root, with NumPy installed). The computation does all the work: for
every pixel it iterates z = z^2 + c in a while loop (16 iterations unrolled per trip, in
f64), keeps the escape count, turns it into a smooth colouring value and maps that through
a cosine palette to RGB bytes; the host only writes the bytes to a PNG (frames.py).

It runs on "vulkan" unless --backend names another backend; when vulkan cannot be used it
says why in one line and runs on "cpu". The loop state is one f64 array (kiln.h has no
tuple parameters): a header row with the trip counter and the trip limit, then the planes
zr, zi, n (iterations done), cr and ci, each height rows of width.
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

import kiln

# frames.py, shared with the other picture sample, is in the parent folder.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import frames  # noqa: E402

UNROLL = 16
BAILOUT = 256.0  # |z|^2 past which a point has escaped
CENTRE = (-0.743643887, 0.131825904)  # seahorse valley
START_WIDTH, ZOOM_PER_FRAME = 3.2, 3.5
# The cosine palette 0.5 + 0.5 cos(2 pi (t * frequency + phase)) per channel.
FREQUENCY = np.array([1.0, 1.0, 1.0], np.float32)
PHASE = np.array([0.0, 0.10, 0.20], np.float32)


def rows(b: kiln.Builder, x: kiln.Op, row: int, count: int, width: int) -> kiln.Op:
    return b.slice(x, [row, 0], [row + count, width])


def header_value(b: kiln.Builder, state: kiln.Op, column: int) -> kiln.Op:
    return b.reshape(b.slice(state, [0, column], [1, column + 1]), [])


def build_condition(width: int, height: int) -> kiln.Computation:
    """trip < trip limit"""
    with kiln.Builder("keep_iterating") as b:
        state = b.parameter(0, "f64", [1 + 5 * height, width], "state")
        return b.build(b.lt(header_value(b, state, 0), header_value(b, state, 1)))


def build_body(width: int, height: int) -> kiln.Computation:
    """UNROLL iterations of z = z^2 + c on the points not escaped yet; the trip counter + 1."""
    with kiln.Builder("iterate") as b:
        state = b.parameter(0, "f64", [1 + 5 * height, width], "state")
        header = rows(b, state, 0, 1, width)
        zr, zi, n, cr, ci = (rows(b, state, 1 + p * height, height, width) for p in range(5))
        for _ in range(UNROLL):
            zr2, zi2 = zr * zr, zi * zi
            active = b.le(zr2 + zi2, b.constant_f64(BAILOUT))
            next_zr = zr2 - zi2 + cr
            next_zi = 2.0 * (zr * zi) + ci
            zr = b.select(active, next_zr, zr)
            zi = b.select(active, next_zi, zi)
            n = n + b.convert(active, "f64")
        one_more = b.convert(b.eq(b.iota("s32", [1, width], 1), b.constant_s32(0)), "f64")
        return b.build(b.concat_in_dim([header + one_more, zr, zi, n, cr, ci], 0))


def build_frame(width: int, height: int) -> kiln.Computation:
    """frame(view f64[4] = (centre x, centre y, pixel size, trips)) -> u8[height, width, 3]"""
    with build_condition(width, height) as condition, build_body(width, height) as body:
        with kiln.Builder("mandelbrot_frame") as b:
            view = b.parameter(0, "f64", [4], "view")
            cx, cy, size = (b.reshape(b.slice_in_dim(view, i, i + 1, 1, 0), []) for i in range(3))
            trips = b.reshape(b.slice_in_dim(view, 3, 4, 1, 0), [1, 1])
            plane = [height, width]
            # c for each pixel: x to the right, y up, centred on (cx, cy)
            x = b.iota("f64", plane, 1) - 0.5 * (width - 1)
            y = 0.5 * (height - 1) - b.iota("f64", plane, 0)
            zeros = b.broadcast(b.constant_f64(0.0), plane)
            zero = b.constant_f64(0.0)
            header = b.concat_in_dim([b.broadcast(zero, [1, 1]), trips, b.broadcast(zero, [1, width - 2])], 1)
            init = b.concat_in_dim([header, zeros, zeros, zeros, cx + x * size, cy + y * size], 0)
            state = b.while_(condition, body, init)
            zr, zi, n = (rows(b, state, 1 + p * height, height, width) for p in range(3))
            # Smooth iteration count, in f32: n + 1 - log2(log2 |z|), with |z|^2 = m.
            m = zr * zr + zi * zi
            escaped = b.gt(m, b.constant_f64(BAILOUT))
            m = b.convert(b.max(m, b.constant_f64(BAILOUT)), "f32")
            smooth = b.convert(n, "f32") + 1.0 - b.log(b.log(m) * (0.5 / math.log(2))) * (1 / math.log(2))
            # Palette position: slow bands that stay readable as the counts grow.
            t = b.sqrt(b.max(smooth, b.constant_f32(0.0))) * 0.35
            rgb = [height, width, 3]
            t3 = b.broadcast_in_dim(t, rgb, [0, 1])
            argument = b.add(b.mul(t3, b.constant(FREQUENCY), [2]), b.constant(PHASE), [2])
            colour = 0.5 + 0.5 * b.cos(argument * (2 * math.pi))
            # Points that never escaped are black.
            black = b.broadcast(b.constant_f32(0.0), rgb)
            colour = b.select(b.broadcast_in_dim(escaped, rgb, [0, 1]), colour, black)
            colour = b.clamp(b.constant_f32(0.0), colour * 255.0 + 0.5, b.constant_f32(255.0))
            return b.build(b.convert(colour, "u8"))


def main() -> None:
    args = frames.parse_options(__doc__.splitlines()[0], 8, os.path.join("frames", "mandelbrot"))
    width, height = args.size

    with frames.open_client(args.backend) as client, build_frame(width, height) as computation:
        with client.compile(computation) as frame:
            os.makedirs(args.output_dir, exist_ok=True)
            for i in range(args.frames):
                frame_width = START_WIDTH / ZOOM_PER_FRAME**i
                trips = -(-(192 + 96 * i) // UNROLL)
                view = np.array([CENTRE[0], CENTRE[1], frame_width / width, trips], np.float64)
                start = time.perf_counter()
                rgb = frame(view)
                ms = (time.perf_counter() - start) * 1e3
                path = os.path.join(args.output_dir, f"frame_{i:03d}.png")
                print(
                    f"{path}  backend {client.backend}  {width}x{height}"
                    f"  zoom {START_WIDTH / frame_width:.0f}x  {trips * UNROLL} iterations  {ms:.1f} ms",
                    flush=True,
                )
                frames.write_png(path, rgb)


if __name__ == "__main__":
    main()
