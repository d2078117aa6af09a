"""What the Python picture samples (mandelbrot/, ripples/) share: their command line, the
client (vulkan unless named, else cpu) and PNG files written with zlib + struct.

The samples run as scripts, so each puts this folder (its parent) on sys.path before it
imports this module.
"""

from __future__ import annotations

import argparse
import struct
import zlib

import numpy as np

import kiln


def parse_size(text: str) -> tuple[int, int]:
    """WxH, each side from 8 to 8192, as (width, height)."""
    width, _, height = text.partition("x")
    if not (width.isdigit() and height.isdigit() and 8 <= int(width) <= 8192 and 8 <= int(height) <= 8192):
        raise argparse.ArgumentTypeError(f"want WxH with sides from 8 to 8192, not {text}")
    return int(width), int(height)


def parse_options(description: str, frames: int, output_dir: str) -> argparse.Namespace:
    """The command line [--backend NAME] [--frames N] [--size WxH] [--output-dir DIR], with
    `frames` frames of 512x384 into `output_dir` unless it says otherwise. Exits (status 2)
    on a bad one; args.backend is None when not given, args.size is (width, height)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--backend", help="a Kiln backend (default: vulkan, else cpu)")
    parser.add_argument("--frames", type=int, default=frames)
    parser.add_argument("--size", type=parse_size, default=(512, 384), metavar="WxH")
    parser.add_argument("--output-dir", default=output_dir)
    args = parser.parse_args()
    if not 1 <= args.frames <= 1000:
        parser.error("--frames wants 1 to 1000")
    return args


def open_client(backend: str | None) -> kiln.Client:
    """A client for `backend`, or when it is None for vulkan, else cpu with a line saying why.
    A named backend never falls back."""
    if backend is not None:
        return kiln.Client(backend)
    try:
        return kiln.Client("vulkan")
    except kiln.KilnError as e:
        print(f"vulkan unavailable ({e.code.name}: {e.message}); using cpu")
        return kiln.Client("cpu")


def write_png(path: str, rgb: np.ndarray) -> None:
    """Writes an 8-bit RGB array of shape (height, width, 3) as a PNG file."""
    height, width, _ = rgb.shape
    rows = np.zeros((height, 1 + width * 3), np.uint8)  # filter byte 0 (none) per row
    rows[:, 1:] = rgb.reshape(height, width * 3)

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header))
        f.write(chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))
