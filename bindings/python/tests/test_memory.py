"""(d) Creating and destroying every kind of handle does not grow resident memory.

100k iterations of builder + computation + buffer (create, read back, destroy),
100k full client + compile + execute cycles (0.25-0.33 ms each on a 2-core
machine at load 3-4: a client starts no thread until a loop needs one), and
10k handles left to the garbage collector. KILN_MEMORY_SCALE (a float,
default 1) scales the counts.
"""

import gc
import os

import numpy as np

import kiln

SCALE = float(os.environ.get("KILN_MEMORY_SCALE", "1"))
SLACK_KIB = 4096


def rss_kib() -> int:
    gc.collect()
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def tiny(name="tiny") -> kiln.Computation:
    with kiln.Builder(name) as b:
        p = b.parameter(0, "f32", [4])
        return b.build(b.add(p, p))


X = np.arange(4, dtype=np.float32)


def buffers_and_builders(client, n):
    for _ in range(n):
        with tiny(), client.buffer(X) as buffer:
            buffer.to_numpy()


def full_cycles(n):
    for _ in range(n):
        with kiln.Client() as client, tiny() as computation:
            with client.compile(computation) as exe, client.buffer(X) as buffer:
                (result,) = exe.execute([buffer])
                with result:
                    assert result.to_numpy()[3] == 6.0


def unclosed_handles(n):
    # No close() at all: reference counting runs __del__, which must free.
    client = kiln.Client()
    for _ in range(n):
        exe = client.compile(tiny())
        exe(X)


def check_flat(run, n):
    """Fails when n more iterations grow the resident set by SLACK_KIB or more.

    A window that grew is run again: a leak grows every window, a one-off
    step (an allocator pool or arena growing once) does not, so only a second
    growing window fails.
    """
    run(max(n // 10, 1))  # warm-up: allocator pools, caches

    def window():
        before = rss_kib()
        run(n)
        return rss_kib() - before

    if window() < SLACK_KIB:
        return
    growth = window()
    assert growth < SLACK_KIB, f"resident memory grew by {growth} KiB over {n} iterations, twice in a row"


def test_buffers_and_builders_100k(client):
    check_flat(lambda n: buffers_and_builders(client, n), int(100_000 * SCALE))


def test_client_compile_execute_cycles_10k():
    check_flat(full_cycles, int(100_000 * SCALE))


def test_handles_freed_by_garbage_collection():
    check_flat(unclosed_handles, int(10_000 * SCALE))
