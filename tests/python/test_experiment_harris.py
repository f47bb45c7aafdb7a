"""The harris experiment's report is built from the database alone (replay, no GPU).

The databases here are SYNTHETIC FIXTURES: made-up times from a formula, written through the
real store API into a temporary folder; never committed, never presented as measurements.
A real recording committed at tests/data/recorded/experiments/<device>_harris.db.xz (see
docs/research/README.md) is replayed the same way when present. That folder is not the one
conftest's RECORDED lists: those recordings are tuning sweeps that test_recorded.py replays.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

import pytest

from conftest import REPO, SYNTHETIC_DEVICE
from reducetune import _core
from reducetune.evaluate.base import CEILING_WORKLOAD, workload

EXPERIMENT_RECORDINGS = REPO / "tests" / "data" / "recorded" / "experiments"
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
HARRIS_RECORDINGS = sorted(EXPERIMENT_RECORDINGS.glob("*_harris.db.xz"))


def made_up_time(variant: str, launch: str, n: int) -> float:
    """Not a measurement: a deterministic formula of the labels."""
    h = int(hashlib.sha256(f"{variant}|{launch}|{n}".encode()).hexdigest()[:8], 16) / 2**32
    return n * 4 / 1.0e12 * (1.0 + 4.0 * h)


def build_harris_fixture(path: Path, scale: float = 1.0, wrong: str = "harris4") -> int:
    """Every point of the harris plan, made up; the seed launch of ``wrong`` recorded as a
    wrong result; one ncu row. Returns how many measurements were written."""
    from reducetune._space import limits_for_arch
    from reducetune.experiments._seed_tables import TABLES
    from reducetune.store.experiment_tables import write_fact, write_ncu
    from reducetune.experiments.harris import plan

    store = _core.Store(str(path))
    dev = store.register_device(SYNTHETIC_DEVICE)
    limits = limits_for_arch("sm_90")
    limits.sm_count = SYNTHETIC_DEVICE["sm_count"]
    jobs = list(dict.fromkeys(plan(list(TABLES), limits)))
    for i, job in enumerate(jobs):
        p = job.point
        t = made_up_time(p.variant_label, p.launch_label, job.n) * scale
        bad = p.params.get("kernel") == wrong and p.params.get("block_size") == 128
        w = {k: v for k, v in workload(p.dtype, p.op, job.n).items() if k != "pattern"}
        mid = store.record_measurement(p, {
            "device_id": dev, **w, "template_hash": _core.template_hash(p.family),
            "driver_version": 13000, "toolkit_version": 13000,
            "samples_s": [t * (1 + 0.01 * k) for k in range(10)],
            "status": "wrong" if bad else "ok", "reason": "made-up wrong result" if bad else "",
            "gbps": job.n * 4 / t / 1e9, "pct_of_peak": 1.0})
        write_fact(path, mid, "harris", {"launches": 1 + i % 3})
        if i == 0:
            write_ncu(path, mid, {"status": "ok", "command": "ncu (made up)", "metrics": {
                "smsp__sass_average_branch_targets_threads_uniform.pct": 12.345}})
    store.record_baseline({"device_id": dev, **CEILING_WORKLOAD, "kind": "ceiling",
                           "samples_s": [1e-3] * 10, "gbps": 3000.0,
                           "driver_version": 13000, "toolkit_version": 13000})
    store.close()
    return len(jobs)


@pytest.fixture(scope="module")
def harris_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("harris") / "made_up_harris.db"
    build_harris_fixture(path)
    return path


def _rows(db: Path) -> dict[tuple[str, str, int], dict]:
    """Every measurement of the file, read straight from the store: (variant, launch, n)."""
    store = _core.Store(str(db), True)
    dev = store.devices()[0]["id"]
    out = {}
    for dtype in ("int32", "float32"):
        for r in store.history(dev, dtype, "sum", None):
            out[(r["variant_label"], r["launch_label"], r["n"])] = r
    store.close()
    return out


def _check_report_holds_database_numbers(db: Path, out: Path) -> None:
    """Every µs and GB/s the report shows for a launch is the database's median and GB/s of
    that very point, and the tuned launch is the fastest verified candidate."""
    report = json.loads((out / "report.json").read_text())
    text = (out / "report.md").read_text()
    rows = _rows(db)
    checked = 0
    for d in report["devices"]:
        for t in d["tables"]:
            for r in t["rows"]:
                for which in ("seed", "tuned"):
                    c = r[which]
                    if not c or c["status"] != "ok":
                        continue
                    m = rows[(c["variant"], c["launch"], t["n"])]
                    assert c["median_s"] == m["median_s"] and c["gbps"] == m["gbps"]
                    assert f"{m['median_s'] * 1e6:.2f}" in text
                    assert f"{m['gbps']:.1f}" in text
                    checked += 1
                tuned = r["tuned"]
                if tuned:  # the fastest verified point of the same kernel the row tunes over
                    kernel = tuned["params"].get("kernel")
                    same = [m["median_s"] for (v, launch, n), m in rows.items()
                            if n == t["n"] and v.split(".")[0] == r["family"]
                            and f".k_{kernel}." in v and m["status"] == "ok"
                            and v.split(".")[1] == t["dtype"]
                            and int(v.split(".bs_")[1].split(".")[0]) in t["block_sizes"]
                            and ("max_blocks" in r["tuned_over"]
                                 or launch == r["seed"]["launch"])]
                    assert tuned["median_s"] == min(same)
    assert checked >= 10


def test_harris_replay_writes_a_report_built_from_the_database(cli, tmp_path, harris_db):
    out = tmp_path / "report"
    code, _, err = cli("experiment", "harris", "--replay", harris_db, "--out", out)
    assert code == 0, err
    text = (out / "report.md").read_text()
    assert "SYNTHETIC test device" in text
    assert "8.054" in text and "(910)" in text  # the published G80 row, with its seed line
    assert "(wrong)" in text  # harris4's seed launch failed verification in the fixture
    assert "12.35" in text  # the fixture's ncu metric, read back from xp_ncu
    assert list(out.glob("harris_*.png")) or not HAS_MATPLOTLIB  # the report needs none
    _check_report_holds_database_numbers(harris_db, out)


def test_harris_report_follows_the_database_not_typed_numbers(cli, tmp_path):
    """Two fixtures that differ only by a factor on every time give reports whose measured
    numbers differ by that factor: nothing in the report is typed by hand."""
    texts = []
    for scale in (1.0, 3.0):
        db = tmp_path / f"scaled_{scale}.db"
        build_harris_fixture(db, scale)
        out = tmp_path / f"out_{scale}"
        code, _, err = cli("experiment", "harris", "--replay", db, "--out", out,
                           "--tables", "g80")
        assert code == 0, err
        _check_report_holds_database_numbers(db, out)
        texts.append(json.loads((out / "report.json").read_text()))
    a, b = (t["devices"][0]["tables"][0]["rows"] for t in texts)
    for ra, rb in zip(a, b):
        assert ra["published"] == rb["published"]
        if ra["seed"]["status"] == "ok":
            assert rb["seed"]["median_s"] == pytest.approx(3.0 * ra["seed"]["median_s"])


def test_harris_refuses_an_unknown_table(cli, tmp_path, harris_db):
    code, _, err = cli("experiment", "harris", "--replay", harris_db, "--out", tmp_path / "o",
                       "--tables", "g80,nope")
    assert code == 2 and "nope" in err


def test_every_published_row_names_a_valid_preset_and_its_seed_line():
    from reducetune._space import Space, limits_for_arch
    from reducetune.experiments._seed_tables import TABLES

    for t in TABLES:
        for r in t.rows:
            preset = Space(r.family, t.dtype, "sum", limits_for_arch("sm_90")).preset(r.preset)
            assert not preset.reasons, (t.key, r.preset)
            seed = Path(__file__).resolve().parents[3] / "shared" / "seeds" / t.source
            if seed.exists() and r.time_ms is not None:  # the seeds lie outside the repo
                line = seed.read_text().splitlines()[r.line - 1]
                shown = f"{r.time_ms:.3f}".rstrip("0").replace(".", "[.,]")
                assert re.search(shown, line), (t.key, r.name, line)


@pytest.mark.skipif(not HARRIS_RECORDINGS, reason="no GPU recording of the harris experiment "
                    "committed yet (tests/data/recorded/experiments/<device>_harris.db.xz)")
@pytest.mark.parametrize("recording", HARRIS_RECORDINGS, ids=lambda p: p.name)
def test_committed_harris_recording_replays_to_its_numbers(cli, tmp_path, recording):
    out = tmp_path / "report"
    code, _, err = cli("experiment", "harris", "--replay", recording, "--out", out)
    assert code == 0, err
    _check_report_holds_database_numbers(plain_copy(recording, tmp_path), out)


def plain_copy(recording: Path, folder: Path) -> Path:
    """NAME.db.xz decompressed into folder (the store reads plain files)."""
    from reducetune.evaluate.replay import decompress_recording

    return decompress_recording(recording, folder)
