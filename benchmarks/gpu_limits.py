"""Measures the GPU figures that `benchmarks/compare --gpu` holds Kiln against,
through PyTorch, and prints one JSON line.

  gpu_limits.py [--copy-mib M] [--matmul-n N] [--no-measure]

* device: torch.cuda.get_device_name(0), with the torch and CUDA versions.
* copy: device-to-device copy bandwidth, `dst.copy_(src)` of two M MiB arrays
  (default 1024; a cudaMemcpy on the device): bytes read + written over the
  time of a batch of copies, each batch ended by torch.cuda.synchronize(); the
  best batch.
* fp32: the FP32 rate of `torch.mm` of two N x N matrices (default 8192) with
  TF32 off (cuBLAS SGEMM), 2 N^3 FLOP over the time of one synchronized call;
  the best call. A measured rate, which is below the datasheet peak.

Without a CUDA GPU visible to torch the JSON has "error" (the reason) instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

WARMUP = 2
BATCHES = 10
COPIES_PER_BATCH = 5
MATMUL_CALLS = 5


def synchronized_seconds(torch, call):
    torch.cuda.synchronize()
    start = time.perf_counter()
    call()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def measure_copy(torch, mib):
    free, _ = torch.cuda.mem_get_info()
    mib = max(1, min(mib, (free // 4) >> 20))  # the two arrays take at most half the free memory
    src = torch.ones((mib << 20) // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)

    def batch():
        for _ in range(COPIES_PER_BATCH):
            dst.copy_(src)
    for _ in range(WARMUP):
        batch()
    best = min(synchronized_seconds(torch, batch) for _ in range(BATCHES)) / COPIES_PER_BATCH
    return {"array_mib": mib, "best_gbps": 2 * (mib << 20) / best / 1e9, "copies": BATCHES * COPIES_PER_BATCH}


def measure_fp32_matmul(torch, n):
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    c = torch.empty(n, n, device="cuda")

    def call():
        torch.mm(a, b, out=c)
    for _ in range(WARMUP):
        call()
    best = min(synchronized_seconds(torch, call) for _ in range(MATMUL_CALLS))
    return {"n": n, "best_gflops": 2 * n**3 / best / 1e9, "calls": MATMUL_CALLS}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--copy-mib", type=int, default=1024)
    parser.add_argument("--matmul-n", type=int, default=8192)
    parser.add_argument("--no-measure", action="store_true", help="only name the GPU and the versions")
    args = parser.parse_args()
    report = {}
    try:
        import torch
    except ImportError:
        report["error"] = f"torch is not installed in {sys.executable}"
        print(json.dumps(report))
        return 0
    report["torch"] = torch.__version__
    report["cuda"] = torch.version.cuda
    if not torch.cuda.is_available():
        build = f"a CUDA {torch.version.cuda} build" if torch.version.cuda else "a CPU-only build"
        report["error"] = (f"torch {torch.__version__} ({build}, in {sys.executable}) finds no CUDA GPU: "
                           "torch.cuda.is_available() is False")
        print(json.dumps(report))
        return 0
    report["device"] = torch.cuda.get_device_name(0)
    if not args.no_measure:
        for name, measure, size in (("copy", measure_copy, args.copy_mib),
                                    ("fp32", measure_fp32_matmul, args.matmul_n)):
            try:
                report[name] = measure(torch, size)
            except Exception as error:  # one figure that cannot be measured is reported, not fatal
                report[f"{name}_error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
