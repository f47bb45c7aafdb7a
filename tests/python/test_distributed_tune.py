"""Tuning with several workers through Optuna's distributed storages (issue 15), in replay
mode against the real recording (tests/data/recorded/), without a GPU.

Four ``reducetune tune --strategy grid`` processes, each with its own results file (four
machines), share the studies through ``--storage``: a real PostgreSQL server started here
from the Debian package (tests/python/pg_server.py), or a JournalStorage file (one host).
One of them is SIGKILLed midway. Then:

- the study completes: every valid point of the restricted space is measured, none twice
  (except, at most, the point the killed worker had recorded but not yet told);
- the killed worker's command, run again, resumes: it measures nothing;
- the four results files merged into one answer ``best`` exactly as one process that swept
  the same points alone, at every size.

And ``--devices 0,1,2,3`` in replay (four workers of one host on one results file), the
merge of the Optuna studies of results files, a replayed recording of two GPUs of one model,
and another machine's trial whose heartbeat stopped (failed, its point re-queued).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO
from pg_server import PgServer
from replay_support import H200_GRID, needs_h200_grid, read_rows, restrict_args

RECORDING = H200_GRID
pytestmark = needs_h200_grid("distributed tunes are tested on a real recording")

# 192 valid points per size, inside the recording's corner: four workers still contend for
# each of them (about 48 claims each per size), and through PostgreSQL every trial costs
# round trips to the server (384 points took it 68 s of the 2-core CI machine's test command).
RESTRICT = {"block_size": ["256"], "warp": ["shuffle"], "finish": ["two_pass", "ticket"],
            "elements_per_thread": ["4", "16"], "grid_cap": ["0", "4"]}
SIZES = ["2^16", "2^24"]
ENV = {**os.environ, "PYTHONUNBUFFERED": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def tune_cmd(db: Path, *extra: str, restrict: dict | None = None,
             sizes: list[str] | None = None) -> list[str]:
    return [sys.executable, "-m", "reducetune", "tune", "--replay", str(RECORDING),
            "--db", str(db), "--dtype", "float32", "--op", "sum", "--sizes", *(sizes or SIZES),
            "--strategy", "grid", "--quiet", "--json",
            *restrict_args(restrict or RESTRICT), *extra]


def all_points() -> set[tuple[str, str]]:
    from reducetune._space import Space, limits_for_arch

    space = Space("tunable", "float32", "sum", limits_for_arch("sm_90"), RESTRICT)
    return {p.labels for p in space.points() if space.selected(p, False, False)}


def measured(db: Path) -> list[tuple[str, str, int]]:
    return read_rows(db, "SELECT v.label, m.launch_label, w.n FROM rt_measurements m"
                     " JOIN rt_variants v ON v.id = m.variant_id"
                     " JOIN rt_workloads w ON w.id = m.workload_id")


def same_best(merged: Path, reference: Path, n: str) -> None:
    """``best`` of the merged file is the reference's, point and numbers alike. Recorded
    medians are often tied (5.600 µs twice at 2^16); the store decides ties by the labels, not
    by the order rows were written in, so a merged file names the same point as one process."""
    got, want = best(merged, n), best(reference, n)
    for key in ("bucket_n", "median_s", "gbps", "determinism", "variant", "launch"):
        assert got.get(key) == want.get(key), f"n={n}: {key} {got.get(key)} != {want.get(key)}"


def medians(db: Path) -> list[tuple[str, str, int, float]]:
    return read_rows(db, "SELECT v.label, m.launch_label, w.n, m.median_s FROM rt_measurements"
                     " m JOIN rt_variants v ON v.id = m.variant_id JOIN rt_workloads w"
                     " ON w.id = m.workload_id WHERE m.status = 'ok'")


def best(db: Path, n: str) -> dict:
    """``reducetune best --json`` of the file at n, in this process: these files are only read
    here, and a process of its own for each of the twenty calls cost more than the answers."""
    from reducetune.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["best", "--db", str(db), "--dtype", "float32", "--op", "sum", "--n", n,
                     "--json"])
    assert code == 0, out.getvalue()
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One process sweeping the same points alone."""
    db = tmp_path_factory.mktemp("reference") / "results.db"
    subprocess.run(tune_cmd(db), cwd=REPO, env=ENV, check=True, capture_output=True)
    return db


@pytest.fixture(scope="module")
def postgres():
    why = PgServer.why_not()
    if why:
        pytest.skip(why)
    server = PgServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["postgresql", "journal"])
def storage(request, tmp_path) -> str:
    if request.param == "journal":
        return f"journal:{tmp_path / 'studies.journal'}"
    return request.getfixturevalue("postgres").new_database()


def kill_midway(proc: subprocess.Popen, db: Path, dbs: list[Path], after: int) -> None:
    """SIGKILL once the workers have recorded ``after`` measurements, this one's among them
    if it can be: a worker ends only when the sweep is exhausted, so it still runs. A worker
    that started last (its imports slowed on a loaded machine) may record its first point near
    the end of the sweep and be gone within one poll (.ci/run failed so once): from twice
    ``after`` on, it is killed whatever it holds, well before the sweep can end."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            counts = [len(measured(d)) if d.exists() else 0 for d in dbs]
            total = sum(counts)
            if total >= after and (counts[dbs.index(db)] > 0 or total >= 2 * after):
                break
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    assert proc.poll() is None, "the worker ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def measured_points(storage: str) -> dict[str, Counter]:
    """Per study: how many trials measured each point (a point proposed again is served, or
    failed as measured elsewhere: not measured twice)."""
    import optuna

    from reducetune.store.study_storage import open_shared_storage

    st = open_shared_storage(storage)
    out = {}
    for s in optuna.get_all_study_summaries(st):
        trials = optuna.load_study(study_name=s.study_name, storage=st).get_trials(
            deepcopy=False)
        out[s.study_name] = Counter((t.user_attrs["variant_label"], t.user_attrs["launch_label"])
                                    for t in trials if t.user_attrs.get("outcome") == "measured")
    return out


def test_four_workers_share_the_studies_survive_a_kill_and_merge(storage, reference,
                                                                 tmp_path):
    dbs = [tmp_path / f"machine{i}.db" for i in range(4)]
    procs = [subprocess.Popen(tune_cmd(db, "--storage", storage), cwd=REPO, env=ENV,
                              text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for db in dbs]
    kill_midway(procs[0], dbs[0], dbs, after=len(all_points()) // 2)  # of two sizes
    for p in procs[1:]:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0 and "Traceback" not in err, err
        assert all(s["stopped"] == "exhausted" for s in json.loads(out)["sizes"])

    # The study completed: every point measured, none twice.
    points = all_points()
    per_study = measured_points(storage)
    assert len(per_study) == len(SIZES)
    for name, counts in per_study.items():
        assert not [p for p, k in counts.items() if k > 1], f"{name}: a point measured twice"
    everywhere = Counter(m for db in dbs for m in measured(db))
    for n in (1 << 16, 1 << 24):
        assert {(v, lab) for v, lab, m in everywhere if m == n} == points, f"n={n}: lost points"
    twice = [m for m, k in everywhere.items() if k > 1]
    assert len(twice) <= 1, f"measured twice: {twice}"  # the killed worker's last point only

    # The killed worker's command, run again, resumes without measuring anything.
    again = subprocess.run(tune_cmd(dbs[0], "--storage", storage), cwd=REPO, env=ENV,
                           capture_output=True, text=True, check=True)
    assert [s["evaluated"] for s in json.loads(again.stdout)["sizes"]] == [0, 0]

    # The four files merged answer best as the single process does.
    merged = tmp_path / "merged.db"
    subprocess.run([sys.executable, "-m", "reducetune", "db", "merge", "--db", str(merged),
                    *map(str, dbs)], cwd=REPO, env=ENV, check=True, capture_output=True)
    assert {(v, lab, n) for v, lab, n in measured(merged)} == set(measured(reference))
    assert sorted(medians(merged)) == sorted(medians(reference))
    for n in ("2^16", "2^20", "2^24", "2^26"):
        same_best(merged, reference, n)


def test_devices_in_replay_are_workers_of_one_gpu_model_sharing_the_studies(reference,
                                                                           tmp_path):
    db = tmp_path / "results.db"
    out = subprocess.run(tune_cmd(db, "--devices", "0,1,2,3"), cwd=REPO, env=ENV,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["workers"]) == 4 and not doc["failed"]
    by_worker = [sum(s["evaluated"] for s in w["sizes"]) for w in doc["workers"]]
    rows = measured(db)
    assert sum(by_worker) == len(rows) == len(set(rows)) == 2 * len(all_points())
    assert set(rows) == set(measured(reference))
    for n in ("2^16", "2^24"):
        same_best(db, reference, n)
    names = [r[0] for r in read_rows(db, "SELECT study_name FROM studies")]
    assert len(names) == 2 and all("@model:NVIDIA H200|132SM|" in s for s in names), names

    # the two-GPU report (scripts/multi-gpu-sweep) of this run against the reference
    from reducetune.experiments.multi_gpu import main as report

    out = tmp_path / "report.md"
    assert report(["--single", str(reference), "--dual", str(db), "--single-s", "2",
                   "--dual-s", "1", "--out", str(out), "--csv", str(tmp_path / "p.csv")]) == 0
    text = out.read_text()
    assert "0 missing, 0 measured twice" in text and "ratio 2.00" in text
    assert f"| GPU 0 again (run to run) | {len(rows)} | 0.00 % |" in text


def test_replay_serves_a_point_from_another_gpu_of_the_same_model(tmp_path):
    """A recording swept by two GPUs of one model holds each point under the GPU that
    measured it: replaying either GPU answers every point, its own rows first."""
    import shutil

    from reducetune._space import Space
    from reducetune.evaluate.base import problem_of, workload
    from reducetune.evaluate.replay import ReplayEvaluator

    rec = tmp_path / "two_gpus.db"
    shutil.copy(RECORDING, rec)
    with sqlite3.connect(rec) as con:
        cols = [r[1] for r in con.execute("PRAGMA table_info(rt_devices)") if r[1] != "id"]
        twin = ", ".join("uuid || '-twin'" if c == "uuid" else c for c in cols)
        con.execute(f"INSERT INTO rt_devices ({', '.join(cols)}) SELECT {twin} FROM rt_devices")
        con.execute("UPDATE rt_measurements SET device_id = (SELECT max(id) FROM rt_devices)"
                    " WHERE id % 2 = 0")
    w = workload("float32", "sum", 1 << 16)
    for device in (0, 1):
        with ReplayEvaluator(rec, device) as ev:
            assert len(ev.table("float32", "sum", 1 << 16)) == 2304
            label, launch = next(iter(ev.table("float32", "sum", 1 << 16)))
            point = Space("tunable", "float32", "sum", ev.limits).parse(label, launch)
            assert ev.evaluate(point, problem_of(w))["status"] == "ok"


def test_merge_copies_the_optuna_studies_and_keeps_a_point_in_both_once(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    common = ["--strategy", "random", "--max-evals", "20"]  # the last --strategy counts
    for db, seed, sizes in ((a, "1", ["2^16"]), (b, "2", ["2^16", "2^24"])):
        subprocess.run(tune_cmd(db, *common, "--seed", seed, sizes=sizes), cwd=REPO, env=ENV,
                       check=True, capture_output=True)

    def points(db: Path) -> dict[str, set]:
        rows = read_rows(db, "SELECT s.study_name, a.value_json, b.value_json FROM trials t"
                         " JOIN studies s USING (study_id)"
                         " JOIN trial_user_attributes a ON a.trial_id = t.trial_id"
                         " AND a.key = 'variant_label' JOIN trial_user_attributes b"
                         " ON b.trial_id = t.trial_id AND b.key = 'launch_label'")
        out: dict[str, set] = {}
        for name, v, lab in rows:
            out.setdefault(name, set()).add((v, lab))
        return out

    before_a, before_b = points(a), points(b)
    run = [sys.executable, "-m", "reducetune", "db", "merge", "--db", str(a), str(b)]
    first = subprocess.run(run, cwd=REPO, env=ENV, check=True, capture_output=True, text=True)
    after = points(a)
    assert set(after) == set(before_a) | set(before_b)
    for name in after:
        assert after[name] == before_a.get(name, set()) | before_b.get(name, set())
    assert "1 added" in first.stdout
    second = subprocess.run(run, cwd=REPO, env=ENV, check=True, capture_output=True, text=True)
    assert "0 added, 0 trials added" in second.stdout
    # a resumed run counts the merged points against its budget: nothing left to measure
    again = subprocess.run(tune_cmd(a, *common, "--seed", "3"), cwd=REPO, env=ENV,
                           check=True, capture_output=True, text=True)
    assert all(s["evaluated"] == 0 for s in json.loads(again.stdout)["sizes"])



def test_a_trial_of_another_machine_whose_heartbeat_stopped_is_retried(tmp_path):
    """Another host's claim cannot be checked by pid: its trial is failed once its heartbeat
    is HEARTBEAT_GRACE_S old, and its point re-queued and measured here."""
    import optuna

    from reducetune.evaluate.replay import ReplayEvaluator
    from reducetune.tuning.samplers import distributions
    from reducetune._space import Space, limits_for_arch
    from reducetune.store.study_share import CLAIM, study_device
    from reducetune.store.study_storage import HEARTBEAT_GRACE_S, open_shared_storage
    from reducetune.tuning.config import TuneConfig, study_name

    one = {**RESTRICT, "block_size": ["256"], "finish": ["ticket"],
           "elements_per_thread": ["4"], "grid_cap": ["0"]}
    url = f"sqlite:///{tmp_path / 'studies.db'}"
    space = Space("tunable", "float32", "sum", limits_for_arch("sm_90"), one)
    config = TuneConfig(sizes=[1 << 16], strategy="grid", restrict=one, by_model=True)
    with ReplayEvaluator(RECORDING) as ev:
        name = study_name(config, 1 << 16, study_device(ev.device, True))
    storage = open_shared_storage(url)
    study = optuna.create_study(study_name=name, storage=storage)
    p = space.points()[0]
    study.enqueue_trial(dict(p.params))
    trial = study.ask(distributions(space.proposable(False, False), "grid"))
    trial.set_user_attr(CLAIM, {"variant_label": p.variant_label,
                                "launch_label": p.launch_label, "host": "another-machine",
                                "pid": 1})
    storage.record_heartbeat(trial._trial_id)
    time.sleep(HEARTBEAT_GRACE_S + 1)
    out = subprocess.run(tune_cmd(tmp_path / "here.db", "--storage", url, restrict=one,
                                  sizes=["2^16"]), cwd=REPO, env=ENV, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    trials = optuna.load_study(study_name=name, storage=storage).trials
    assert trials[0].state == optuna.trial.TrialState.FAIL
    retried = [t for t in trials if t.system_attrs.get("failed_trial") == trial.number]
    assert retried and retried[0].user_attrs.get("outcome") == "measured"
    assert (*p.labels, 1 << 16) in measured(tmp_path / "here.db")
