"""The measuring path of the harris and cascading experiments, without a GPU: a FAKE GPU
evaluator (made-up results, never committed) stands in for the worker, so that what the
experiments write (measurements, launches beside them, baselines), the resume of a run cut
short and the time limit are tested on a CPU."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import SYNTHETIC_DEVICE
from reducetune import _core


class FakeGpu:
    """A GpuEvaluator's interface with made-up results (not measurements)."""

    instances: list["FakeGpu"] = []

    def __init__(self, ordinal: int = 0, timeout_s: float = 60.0, **_: object) -> None:
        from reducetune._space import limits_for_arch

        self.device = dict(SYNTHETIC_DEVICE, arch=90)
        self.limits = limits_for_arch("sm_90")
        self.limits.sm_count = SYNTHETIC_DEVICE["sm_count"]
        self.evaluated: list[tuple[str, str, int]] = []
        self.precompiled: list[str] = []
        self.ceiling_samples_s = [1e-3] * 10
        FakeGpu.instances.append(self)

    def set_sampling(self, options: dict) -> None:
        self.sampling = options

    def precompile(self, points: list) -> dict:
        self.precompiled += [p.variant_label for p in points]
        return {}

    def evaluate(self, point, problem, data=None) -> dict:
        variant, launch = point.labels  # made-up results keyed by what the point writes
        n = problem.elements
        self.evaluated.append((variant, launch, n))
        t = n * 4 / 1e12 * (1 + len(variant) % 7)
        if "harris4" in variant:
            return {"status": "wrong", "kind": "wrong", "reason": "made-up wrong result",
                    "samples_s": [t] * 10}
        return {"status": "ok", "samples_s": [t] * 10, "median_s": t, "gbps": n * 4 / t
                / 1e9, "pct_of_peak": 1.0, "launches": 2}

    def cub(self, w: dict) -> dict:
        return {"status": "ok", "samples_s": [1e-3] * 10, "gbps": 1000.0}

    def ceiling_bytes_per_s(self) -> float:
        return 3.0e12

    def close(self) -> None:
        pass


@pytest.fixture
def fake_gpu(monkeypatch):
    import reducetune.evaluate.gpu as evaluators

    FakeGpu.instances.clear()
    monkeypatch.setattr(evaluators, "GpuEvaluator", FakeGpu)
    return FakeGpu.instances


def test_harris_measures_every_point_once_and_resumes_without_measuring(cli, tmp_path,
                                                                        fake_gpu):
    out = tmp_path / "harris"
    code, _, err = cli("experiment", "harris", "--tables", "g80,smem", "--out", out)
    assert code == 0, err
    first = fake_gpu[0].evaluated
    assert len(first) == len(set(first)) > 40
    assert (out / "harris.db").exists() and (out / "report.md").exists()
    with sqlite3.connect(out / "harris.db") as con:
        facts = con.execute("SELECT COUNT(*) FROM xp_facts").fetchone()[0]
        measured = con.execute("SELECT COUNT(*) FROM rt_measurements").fetchone()[0]
        config = con.execute("SELECT config FROM rt_studies").fetchone()[0]
    assert measured == len(first) and 0 < facts < measured  # wrong results report no launches
    assert json.loads(config)["plan"] == {"tables": ["g80", "smem"]}
    code, _, err = cli("experiment", "harris", "--tables", "g80,smem", "--out", out)
    assert code == 0, err
    assert fake_gpu[1].evaluated == [] and "already in" in err
    # the report of the second run is the replay of the first run's database
    code, _, err = cli("experiment", "harris", "--tables", "g80,smem", "--out",
                       tmp_path / "replayed", "--replay", out / "harris.db")
    assert code == 0, err
    assert json.loads((tmp_path / "replayed" / "report.json").read_text())["devices"] == \
        json.loads((out / "report.json").read_text())["devices"]


def test_a_time_limit_leaves_points_for_the_next_run(cli, tmp_path, fake_gpu, monkeypatch):
    import reducetune.experiments._xp_run as xp_run

    calls = iter(range(10**6))
    monkeypatch.setattr(xp_run.time, "monotonic", lambda: float(next(calls)))
    out = tmp_path / "harris"
    code, _, err = cli("experiment", "harris", "--tables", "g80", "--out", out,
                       "--time-limit", "20")
    assert code == 0, err
    assert "time limit" in err
    done = len(fake_gpu[0].evaluated)
    code, _, err = cli("experiment", "harris", "--tables", "g80", "--out", out)
    assert code == 0, err
    again = fake_gpu[1].evaluated
    assert done > 0 and again and not set(again) & set(fake_gpu[0].evaluated)


def test_cascading_measures_baselines_sweep_and_passes(cli, tmp_path, fake_gpu):
    out = tmp_path / "cascading"
    code, _, err = cli("experiment", "cascading", "--out", out, "--quick", "--sizes", "2^20",
                       "--passes-sizes", "2^10", "2^14")
    assert code == 0, err
    ev = fake_gpu[0]
    sizes = [n for _, _, n in ev.evaluated]
    assert set(sizes) == {1 << 10, 1 << 14, 1 << 20}
    for n in (1 << 10, 1 << 14):  # nested launches last in their workload (the slowest)
        at_n = [v for v, _, m in ev.evaluated if m == n]
        assert at_n[-1].startswith("nested.") and not any(v.startswith("nested.")
                                                          for v in at_n[:-1])
    store = _core.Store(str(out / "cascading.db"), True)
    dev = store.devices()[0]["id"]
    from reducetune.evaluate.base import CEILING_WORKLOAD, workload

    assert store.find_baseline(dev, CEILING_WORKLOAD, "ceiling") is not None
    assert store.find_baseline(dev, workload("float32", "sum", 1 << 20), "cub") is not None
    store.close()
    report = json.loads((out / "report.json").read_text())
    assert report["options"]["block_sizes"] == [256]
    assert all(c["launches"] == 2 for p in report["devices"][0]["passes"] for c in p["cells"])


_NCU_COLUMNS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                "Stream", "Block Size", "Grid Size", "Device", "CC", "gpu__time_duration.sum",
                "smsp__sass_average_branch_targets_threads_uniform.pct",
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
_NCU_UNITS = [""] * 11 + ["nsecond", "%", "  "]
_NCU_ROW = ["0", "4242", "python3", "localhost", "void rt::seeds::harris0<int, rt::op_sum, "
            "128u>(const int *, int *, unsigned long long)", "1", "7", "(128, 1, 1)",
            "(32768, 1, 1)", "0", "9.0", "1,234", "54.32", "4,096"]
# what ncu --csv --page raw prints (made up): its log lines, a header, units, a kernel's row
FAKE_NCU_CSV = "\n".join(["==PROF== Connected to process 4242 (/usr/bin/python3)",
                          *(",".join(f'"{c}"' for c in r)
                            for r in (_NCU_COLUMNS, _NCU_UNITS, _NCU_ROW)),
                          "==PROF== Disconnected from process 4242", ""])


def test_ncu_output_is_read_per_metric():
    from reducetune.experiments._ncu import parse_csv

    m = parse_csv(FAKE_NCU_CSV)
    assert m["gpu__time_duration.sum"] == 1234.0
    assert m["smsp__sass_average_branch_targets_threads_uniform.pct"] == 54.32
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 4096.0
    assert m["units"]["gpu__time_duration.sum"] == "nsecond"
    assert "harris0<" in m["kernel"] and m["grid"] == "(32768, 1, 1)"
    assert parse_csv("==ERROR== ERR_NVGPUCTRPERM") == {}


def test_ncu_rows_are_kept_beside_their_measurement_and_replayed(cli, tmp_path, fake_gpu):
    """A FAKE ncu (a script printing made-up counters) stands in for Nsight Compute."""
    fake = tmp_path / "ncu"
    fake.write_text("#!/bin/sh\ncat <<'X'\n" + FAKE_NCU_CSV + "X\n")
    fake.chmod(0o755)
    broken = tmp_path / "ncu-denied"
    broken.write_text("#!/bin/sh\necho '==ERROR== ERR_NVGPUCTRPERM'\nexit 1\n")
    broken.chmod(0o755)
    out = tmp_path / "harris"
    code, _, err = cli("experiment", "harris", "--tables", "g80", "--out", out, "--ncu",
                       "--ncu-path", broken)
    assert code == 0, err
    assert "ERR_NVGPUCTRPERM" in (out / "report.md").read_text()  # the failure, kept as data
    code, _, err = cli("experiment", "harris", "--tables", "g80", "--out", out, "--ncu",
                       "--ncu-path", fake, "--ncu-launches", "both")  # profiles again what failed
    assert code == 0, err
    with sqlite3.connect(out / "harris.db") as con:
        rows = con.execute("SELECT n.status, n.command, m.id FROM xp_ncu n JOIN "
                           "rt_measurements m ON m.id = n.measurement_id").fetchall()
    assert len(rows) >= 8 and all(s == "ok" for s, _, _ in rows)  # seed and tuned launches
    assert all("--metrics" in c and "_ncu_probe" in c for _, c, _ in rows)
    replayed = tmp_path / "replayed"
    code, _, err = cli("experiment", "harris", "--tables", "g80", "--out", replayed,
                       "--replay", out / "harris.db")
    assert code == 0, err
    text = (replayed / "report.md").read_text()
    assert "54.32" in text and "Nsight Compute" in text
    assert "branch efficiency % 54.32 → 54.32" in text  # the step-by-step evidence


def test_a_metric_ncu_does_not_know_is_left_out_and_said(tmp_path):
    from reducetune._space import Space, limits_for_arch
    from reducetune.experiments._ncu import profile

    fake = tmp_path / "ncu"  # refuses branch efficiency, answers without it (made up)
    fake.write_text("#!/bin/sh\ncase \"$*\" in *branch_targets*) echo '==ERROR== Failed to "
                    "find metric smsp__sass_average_branch_targets_threads_uniform.pct'; "
                    "exit 1;; esac\ncat <<'X'\n" + FAKE_NCU_CSV + "X\n")
    fake.chmod(0o755)
    p = Space("seeds", "int32", "sum", limits_for_arch("sm_90")).preset("harris0").point
    r = profile(str(fake), p, 1 << 22, 30)
    assert r["status"] == "ok" and "branch_targets" in r["reason"]
    assert "branch_targets" not in r["command"]


def test_a_recording_is_packed_with_a_sidecar_read_from_the_file(cli, tmp_path, fake_gpu):
    from reducetune.experiments._pack import main as pack

    out = tmp_path / "harris"
    code, _, err = cli("experiment", "harris", "--tables", "smem", "--out", out)
    assert code == 0, err
    assert pack([str(out / "harris.db"), str(tmp_path / "fake_harris.db.xz")]) == 0
    side = json.loads((tmp_path / "fake_harris.json").read_text())
    assert side["devices"][0]["uuid"] == SYNTHETIC_DEVICE["uuid"]
    assert side["status"]["ok"] > 0 and side["commands"] and side["sampling"]
    code, _, err = cli("experiment", "harris", "--tables", "smem", "--out", tmp_path / "r",
                       "--replay", tmp_path / "fake_harris.db.xz")
    assert code == 0, err
    packed, measured = (json.loads((d / "report.json").read_text())["devices"][0]["tables"]
                        for d in (tmp_path / "r", out))
    assert packed == measured  # the packed file replays to the same numbers
