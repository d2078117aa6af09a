#!/usr/bin/env python3
"""Checks benchmarks/compare's floor report (issue 19: every row where Kiln is
slower than the best peer), its achieved fractions of the machine's limits,
its distribution check for random-number rows, on made-up results (no
workload runs), and its timeout for a peer's process."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import os
import sys
import types
import unittest
from contextlib import redirect_stdout
from pathlib import Path

try:
    import numpy as np
except ImportError:
    # As benchmarks/compare does: Debian's python3 has NumPy, a pyenv one may not.
    if sys.executable != "/usr/bin/python3" and Path("/usr/bin/python3").exists():
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    sys.exit("compare_floor_test: needs NumPy")

COMPARE = Path(__file__).resolve().parents[2] / "benchmarks" / "compare"


def load_compare():
    loader = importlib.machinery.SourceFileLoader("kiln_benchmarks_compare", str(COMPARE))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


compare = load_compare()


def row(name, **medians_us):
    results = {}
    for system, median in medians_us.items():
        results[system] = {"error": "not installed"} if median is None else {"median_us": median}
    return {"workload": name, "results": results}


class FloorTest(unittest.TestCase):
    def test_lists_only_rows_where_a_peer_is_faster(self):
        rows = [row("kiln_ahead", kiln=10.0, numpy=20.0, jax=15.0),
                row("jax_ahead", kiln=10.0, numpy=20.0, jax=4.0),
                row("tie", kiln=10.0, numpy=10.0)]
        self.assertEqual(compare.slower_than_best_peer(rows, ["numpy", "jax"]), [("jax_ahead", "jax", 0.4)])

    def test_ignores_peers_that_failed_disagreed_or_were_not_asked(self):
        wrong = row("wrong_peer", kiln=10.0, numpy=20.0, jax=1.0)
        wrong["results"]["jax"]["mismatch"] = "max abs error 5 vs numpy"
        rows = [wrong, row("missing_peer", kiln=10.0, numpy=20.0, iree=None),
                row("not_asked", kiln=10.0, numpy=20.0, torch=1.0)]
        self.assertEqual(compare.slower_than_best_peer(rows, ["numpy", "jax", "iree"]), [])

    def test_kiln_that_did_not_run_or_was_wrong_trails(self):
        failed = row("kiln_failed", kiln=None, numpy=20.0)
        wrong = row("kiln_wrong", kiln=1.0, numpy=20.0)
        wrong["results"]["kiln"]["mismatch"] = "max abs error 5 vs numpy"
        self.assertEqual(compare.slower_than_best_peer([failed, wrong], ["numpy"]),
                         [("kiln_failed", "numpy", None), ("kiln_wrong", "numpy", None)])

    def test_report_names_each_trailing_row(self):
        args = types.SimpleNamespace(peers=["numpy", "jax"])
        printed = io.StringIO()
        with redirect_stdout(printed):
            compare.report_floor(args, [row("a", kiln=10.0, jax=5.0), row("b", kiln=1.0, numpy=3.0)])
        text = printed.getvalue()
        self.assertIn("Kiln at or ahead of the best peer on 1 of 2 rows; slower on:", text)
        self.assertIn("a: best peer jax, jax/kiln 0.50 (Kiln 2.0x slower)", text)
        self.assertNotIn("  b:", text)


class DistributionTest(unittest.TestCase):
    def test_standard_normal_samples_pass(self):
        samples = np.random.default_rng(7).standard_normal(1 << 16, dtype=np.float32)
        self.assertIsNone(compare.distribution_mismatch([samples]))

    def test_shifted_scaled_or_broken_samples_fail(self):
        samples = np.random.default_rng(7).standard_normal(1 << 16, dtype=np.float32)
        self.assertIn("not standard normal", compare.distribution_mismatch([samples + 0.1]))
        self.assertIn("not standard normal", compare.distribution_mismatch([samples * 1.1]))
        self.assertIn("not standard normal", compare.distribution_mismatch([np.zeros(1 << 16, np.float32)]))
        broken = samples.copy()
        broken[3] = np.nan
        self.assertEqual(compare.distribution_mismatch([broken]), "non-finite samples")
        self.assertEqual(compare.distribution_mismatch([samples, samples]), "expected one array of samples")

    def test_same_generator_must_give_the_same_numbers(self):
        samples = np.random.default_rng(7).standard_normal(1 << 16, dtype=np.float32)
        self.assertIsNone(compare.same_generator_mismatch([samples], [samples.copy()]))
        other = np.random.default_rng(8).standard_normal(1 << 16, dtype=np.float32)
        self.assertIn("vs jax", compare.same_generator_mismatch([other], [samples]))
        self.assertIn("shapes differ", compare.same_generator_mismatch([samples[:5]], [samples]))


class PeerTimeoutTest(unittest.TestCase):
    def test_a_process_past_its_timeout_reads_timed_out(self):
        report, error = compare.run_json([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
        self.assertIsNone(report)
        self.assertEqual(error, "timed out after 0.5 s")

    def test_a_process_within_its_timeout_reports(self):
        report, error = compare.run_json([sys.executable, "-c", "print('{\"median_us\": 3}')"], timeout=30)
        self.assertEqual((report, error), ({"median_us": 3}, ""))


class AchievedTest(unittest.TestCase):
    """The achieved fraction sets Kiln's fastest call against the machine's best measurement."""

    def test_fastest_round_keeps_the_fastest_call_of_every_round(self):
        rounds = [{"median_us": 700.0, "best_us": 650.0}, {"median_us": 620.0, "best_us": 600.0},
                  {"median_us": 640.0, "best_us": 590.0}, {"error": "crashed"}]
        fastest = compare.fastest_round(rounds)
        self.assertEqual(fastest["median_us"], 620.0)
        self.assertEqual(fastest["best_of_rounds_us"], 590.0)

    def test_fraction_uses_the_fastest_call_against_the_best_bandwidth(self):
        bandwidth = {"copy": {"best_gbps": 80.0, "median_gbps": 40.0}}
        kiln = compare.fastest_round([{"median_us": 1000.0, "best_us": 800.0}])
        bound = {"bound": "copy", "array_mib": 16, "traffic_bytes": 48e6, "results": {"kiln": kiln},
                 "bandwidth_around_kiln": [bandwidth, {"copy": {"best_gbps": 60.0, "median_gbps": 50.0}}]}
        fraction, text = compare.achieved(bound, {"bandwidth": {}})
        self.assertAlmostEqual(fraction, 48e6 / 800e-6 / 80e9)
        self.assertEqual(text, "60.0 of 80.0 GB/s")

    def test_fraction_falls_back_to_the_median_without_call_times(self):
        bound = {"bound": "read", "array_mib": 1, "traffic_bytes": 4e6,
                 "results": {"kiln": {"median_us": 100.0}}}
        fraction, _ = compare.achieved(bound, {"bandwidth": {1: {"read": {"best_gbps": 50.0}}}})
        self.assertAlmostEqual(fraction, 4e6 / 100e-6 / 50e9)


class GpuReportTest(unittest.TestCase):
    """The header of a --gpu table names every peer that ran."""

    def test_kiln_cpu_that_ran_is_described_not_called_missing(self):
        args = types.SimpleNamespace(peers=["kiln-cpu"], threads=16)
        rows = [{"results": {"kiln-cpu": {"median_us": 537.6, "best_us": 530.0}}, "reference_report": {}}]
        out = io.StringIO()
        with redirect_stdout(out):
            compare.report_gpu(args, {"gpu": {}}, rows, "cuda")
        self.assertIn("kiln-cpu: Kiln's own cpu backend on the host (16 threads)", out.getvalue())
        self.assertNotIn("did not run", out.getvalue())


if __name__ == "__main__":
    sys.exit(unittest.main())
