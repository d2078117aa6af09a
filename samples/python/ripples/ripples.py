"""Raindrops on a pond: a damped 2-D wave equation in Kiln, rendered as shaded water PNGs.

    KILN_LIBRARY_PATH=build/release/capi PYTHONPATH=bindings/python/src \\
        python3 samples/python/ripples/ripples.py [--backend NAME] [--frames N] [--size WxH]
                                                  [--output-dir DIR]

(from the repository root, with NumPy installed). Each frame is one execution of one
computation that adds this frame's raindrops to the surface height u as dents with a
raised rim, runs a while loop of STEPS steps of

    u_next = u + (1 - damping) (u - u_prev) + courant^2 laplacian(u)

with the laplacian built from slices and concatenations (the edge rows and columns repeat,
so waves reflect off the banks), and shades the surface (a normal from the height's
gradient, diffuse and specular light, deep to shallow blues) as RGB bytes. The surface
stays on the device between frames: the computation returns it next to the picture.

It runs on "vulkan" unless --backend names another backend; when vulkan cannot be used it
says why in one line and runs on "cpu". The loop state is one f32 array (kiln.h has no
tuple parameters): a header row holding the step counter, then u and u_prev.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import kiln

# frames.py, shared with the other picture sample, is in the parent folder.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import frames  # noqa: E402

STEPS = 24  # per frame, one per loop trip (unrolling a stencil makes fused kernels recompute it)
DROP_SLOTS = 4
COURANT2 = 0.25  # (c dt / dx)^2; stable below 0.5
DAMPING = 0.004
RELIEF = 20.0  # how steep the shading makes the waves
DEEP = np.array([0.01, 0.07, 0.20], np.float32)
SHALLOW = np.array([0.10, 0.45, 0.66], np.float32)
SKY = np.array([0.75, 0.85, 1.0], np.float32)
LIGHT = (-0.45, -0.55, 0.70)  # from the upper left
HALFWAY = (-0.24, -0.29, 0.93)  # between the light and the viewer straight above
# (frame, x and y as fractions of the pond, depth, radius as a fraction of its width);
# the schedule repeats every SCHEDULE_PERIOD frames.
SCHEDULE_PERIOD = 12
RAINDROPS = [
    (0, 0.30, 0.38, -1.0, 0.008),
    (0, 0.68, 0.62, -0.8, 0.007),
    (2, 0.55, 0.22, -0.9, 0.008),
    (4, 0.18, 0.78, -1.0, 0.006),
    (5, 0.82, 0.30, -0.7, 0.006),
    (7, 0.45, 0.58, -1.1, 0.008),
    (9, 0.66, 0.84, -0.8, 0.007),
    (10, 0.12, 0.18, -0.6, 0.006),
    (10, 0.88, 0.70, -0.7, 0.007),
]


def rows(b: kiln.Builder, x: kiln.Op, row: int, count: int, width: int) -> kiln.Op:
    return b.slice(x, [row, 0], [row + count, width])


def neighbour(b: kiln.Builder, u: kiln.Op, dimension: int, size: int, towards: int) -> kiln.Op:
    """u shifted by one along `dimension`, the edge repeated: towards -1 gives each element
    its lower neighbour, +1 its upper one."""
    if towards < 0:
        parts = [b.slice_in_dim(u, 0, 1, 1, dimension), b.slice_in_dim(u, 0, size - 1, 1, dimension)]
    else:
        parts = [b.slice_in_dim(u, 1, size, 1, dimension), b.slice_in_dim(u, size - 1, size, 1, dimension)]
    return b.concat_in_dim(parts, dimension)


def build_condition(width: int, height: int) -> kiln.Computation:
    """step < STEPS"""
    with kiln.Builder("keep_stepping") as b:
        state = b.parameter(0, "f32", [1 + 2 * height, width], "state")
        return b.build(b.lt(b.reshape(b.slice(state, [0, 0], [1, 1]), []), b.constant_f32(STEPS)))


def build_body(width: int, height: int) -> kiln.Computation:
    """One step of the wave equation; the step counter + 1."""
    with kiln.Builder("step") as b:
        state = b.parameter(0, "f32", [1 + 2 * height, width], "state")
        header = rows(b, state, 0, 1, width)
        u = rows(b, state, 1, height, width)
        previous = rows(b, state, 1 + height, height, width)
        laplacian = (
            neighbour(b, u, 0, height, -1)
            + neighbour(b, u, 0, height, 1)
            + neighbour(b, u, 1, width, -1)
            + neighbour(b, u, 1, width, 1)
            - 4.0 * u
        )
        following = u + (1.0 - DAMPING) * (u - previous) + COURANT2 * laplacian
        one_more = b.convert(b.eq(b.iota("s32", [1, width], 1), b.constant_s32(0)), "f32")
        return b.build(b.concat_in_dim([header + one_more, following, u], 0))


def build_sum() -> kiln.Computation:
    with kiln.Builder("sum") as b:
        return b.build(b.parameter(0, "f32", [], "x") + b.parameter(1, "f32", [], "y"))


def build_frame(width: int, height: int) -> kiln.Computation:
    """frame(surface f32[2H, W] = (u, u_prev), drops f32[DROP_SLOTS, 4] = (x, y, depth, radius)
    per drop, depth 0 for none) -> (new surface, u8[H, W, 3])"""
    with build_condition(width, height) as condition, build_body(width, height) as body, build_sum() as sum_:
        with kiln.Builder("ripples_frame") as b:
            surface = b.parameter(0, "f32", [2 * height, width], "surface")
            drops = b.parameter(1, "f32", [DROP_SLOTS, 4], "drops")

            def field(column: int) -> kiln.Op:
                return b.reshape(b.slice_in_dim(drops, column, column + 1, 1, 1), [DROP_SLOTS])

            # The raindrops, summed over the slots: depth (1 - r^2/radius^2) exp(-r^2/radius^2).
            slot_plane = [DROP_SLOTS, height, width]
            dx = b.sub(b.iota("f32", slot_plane, 2), field(0), [0])
            dy = b.sub(b.iota("f32", slot_plane, 1), field(1), [0])
            r2 = b.div(dx * dx + dy * dy, field(3) * field(3), [0])
            bumps = b.mul((1.0 - r2) * b.exp(-r2), field(2), [0])
            bumps = b.reduce(bumps, b.constant_f32(0.0), sum_, [0])
            # A drop starts at rest: it dents u and u_prev alike.
            u = rows(b, surface, 0, height, width) + bumps
            previous = rows(b, surface, height, height, width) + bumps
            start = b.broadcast(b.constant_f32(0.0), [1, width])
            state = b.while_(condition, body, b.concat_in_dim([start, u, previous], 0))
            new_surface = rows(b, state, 1, 2 * height, width)
            u = rows(b, state, 1, height, width)

            # Shading: the normal of the surface z = RELIEF u.
            gx = (neighbour(b, u, 1, width, 1) - neighbour(b, u, 1, width, -1)) * (0.5 * RELIEF)
            gy = (neighbour(b, u, 0, height, 1) - neighbour(b, u, 0, height, -1)) * (0.5 * RELIEF)
            nz = b.rsqrt(gx * gx + gy * gy + 1.0)
            nx, ny = -(gx * nz), -(gy * nz)
            diffuse = b.max(nx * LIGHT[0] + ny * LIGHT[1] + nz * LIGHT[2], b.constant_f32(0.0))
            specular = b.max(nx * HALFWAY[0] + ny * HALFWAY[1] + nz * HALFWAY[2], b.constant_f32(0.0))
            specular = b.pow(specular, b.constant_f32(60.0))
            # Deep blue in the troughs and near the viewer (the bottom of the picture),
            # lighter on the crests and towards the far bank.
            level = (0.5 + 0.5 * b.tanh(u * 4.0)) * 0.45
            level = level + (float(height - 1) - b.iota("f32", [height, width], 0)) * (0.55 / (height - 1))
            rgb = [height, width, 3]
            level3 = b.broadcast_in_dim(level, rgb, [0, 1])
            colour = b.add(b.mul(level3, b.constant(SHALLOW - DEEP), [2]), b.constant(DEEP), [2])
            colour = b.mul(colour, 0.35 + 0.9 * diffuse, [0, 1])
            colour = colour + b.mul(b.broadcast_in_dim(specular, rgb, [0, 1]), b.constant(SKY), [2])
            colour = b.clamp(b.constant_f32(0.0), colour * 255.0 + 0.5, b.constant_f32(255.0))
            return b.build(b.tuple([new_surface, b.convert(colour, "u8")]))


def drops_for(frame: int, width: int, height: int) -> np.ndarray:
    drops = np.zeros((DROP_SLOTS, 4), np.float32)
    drops[:, 3] = 1.0  # depth 0: no drop
    falling = [d for d in RAINDROPS if d[0] == frame % SCHEDULE_PERIOD][:DROP_SLOTS]
    for slot, (_, x, y, depth, radius) in enumerate(falling):
        drops[slot] = (x * (width - 1), y * (height - 1), depth, radius * width + 1.5)
    return drops


def main() -> None:
    args = frames.parse_options(__doc__.splitlines()[0], 12, os.path.join("frames", "ripples"))
    width, height = args.size

    with frames.open_client(args.backend) as client, build_frame(width, height) as computation:
        with client.compile(computation) as frame:
            os.makedirs(args.output_dir, exist_ok=True)
            surface = client.buffer(np.zeros((2 * height, width), np.float32))
            for i in range(args.frames):
                start = time.perf_counter()
                new_surface, picture = frame.execute([surface, drops_for(i, width, height)])
                with picture:
                    rgb = picture.to_numpy()
                ms = (time.perf_counter() - start) * 1e3
                # The new surface replaces the old one on the device.
                surface.close()
                surface = new_surface
                path = os.path.join(args.output_dir, f"frame_{i:03d}.png")
                print(
                    f"{path}  backend {client.backend}  {width}x{height}"
                    f"  steps {i * STEPS}-{(i + 1) * STEPS}  {ms:.1f} ms",
                    flush=True,
                )
                frames.write_png(path, rgb)
            surface.close()


if __name__ == "__main__":
    main()
