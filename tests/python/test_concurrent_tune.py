"""Several ``reducetune tune`` processes on one results file at once (issue 11), in replay
mode against the real recording (tests/data/recorded/, with the --restrict of its sidecar).

- Started together on a NEW file, each with its own study: none may die while the file and
  Optuna's tables are created (it used to: ``table studies already exists``, ``UNIQUE
  constraint failed: alembic_version.version_num``), every study is there, and the
  measurements are exactly those of the same commands run one after another. A race shows up
  only now and then, hence the repeats (before the fix, about one start in three failed).
- The same study run by several processes at once: together they measure at most --max-evals
  distinct points, and no point twice (it used to be 109 points against a budget of 60); the
  claim on a point that keeps others from measuring it dies with its process.
- An older file opened by several processes at once is migrated, and backed up, once.

Every command uses --seed, so that each study's points do not depend on timing: the same
seed in every process of one study also makes them propose the same points at the same time,
the worst case for measuring a point twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, recording_meta
from replay_support import H200_GRID, needs_h200_grid, read_rows, restrict_args

RECORDING = H200_GRID
pytestmark = needs_h200_grid("concurrent tunes are tested on a real recording")

# The recording's sizes, and two strategies: four studies at most, each of its own.
STUDIES = [("2^16", "tpe"), ("2^24", "tpe"), ("2^16", "random"), ("2^24", "random")]


def tune_cmd(db: Path, size: str, strategy: str = "tpe", max_evals: int = 4) -> list[str]:
    return [sys.executable, "-m", "reducetune", "tune", "--replay", str(RECORDING),
            "--db", str(db), "--dtype", "float32", "--op", "sum", "--quiet", "--json",
            *restrict_args((recording_meta(RECORDING) or {}).get("restrict", {})), "--sizes", size, "--strategy", strategy,
            "--max-evals", str(max_evals), "--seed", "1"]


def run_at_once(cmds: list[list[str]]) -> list[tuple[int, str, str]]:
    """Starts every command before waiting for any: (exit status, stdout, stderr) each."""
    # One BLAS thread each (numpy, through Optuna): a replay needs none, and a few dozen
    # processes' thread pools are what a busy machine runs out of first.
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen(c, cwd=REPO, env=env, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for c in cmds]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        out.append((p.returncode, stdout, stderr))
    return out


def assert_clean(results: list[tuple[int, str, str]], what: str) -> None:
    for i, (code, _, err) in enumerate(results):
        assert code == 0 and "Traceback" not in err, f"{what}: process {i} exit {code}\n{err}"


def measurement_rows(db: Path) -> Counter[tuple[Any, ...]]:
    """rt_measurements without what depends on the order of writes (row and foreign ids,
    study, time), as a multiset."""
    return Counter(read_rows(
        db, "SELECT d.uuid, v.label, m.launch_label, w.dtype, w.op, w.n, w.data_pattern, w.seed,"
        " m.template_hash, m.driver_version, m.toolkit_version, m.samples, m.sample_count,"
        " m.median_s, m.rel_stddev, m.gbps, m.pct_of_peak, m.pct_of_ceiling, m.status,"
        " m.reason, m.launch_parameters FROM rt_measurements m"
        " JOIN rt_devices d ON d.id = m.device_id JOIN rt_variants v ON v.id = m.variant_id"
        " JOIN rt_workloads w ON w.id = m.workload_id"))


def studies(db: Path) -> tuple[set[str], set[str], Counter[str]]:
    """(rt_studies names, Optuna's study names, trials per Optuna study)."""
    ours = {r[0] for r in read_rows(db, "SELECT name FROM rt_studies")}
    optuna = {r[0] for r in read_rows(db, "SELECT study_name FROM studies")}
    trials = Counter(r[0] for r in read_rows(
        db, "SELECT s.study_name FROM trials t JOIN studies s USING (study_id)"))
    return ours, optuna, trials


@pytest.fixture(scope="module")
def sequential(tmp_path_factory: pytest.TempPathFactory):
    """The reference: the commands of the first k studies run one after another."""
    cache: dict[int, Path] = {}

    def reference(k: int) -> Path:
        if k not in cache:
            db = tmp_path_factory.mktemp("sequential") / "results.db"
            for size, strategy in STUDIES[:k]:
                assert_clean(run_at_once([tune_cmd(db, size, strategy)]), "sequential run")
            cache[k] = db
        return cache[k]

    return reference


@pytest.mark.parametrize("procs,repeats", [(2, 20), (4, 5)])
def test_processes_started_at_once_on_a_new_file_all_succeed(procs, repeats, sequential,
                                                            tmp_path):
    reference = sequential(procs)
    want_rows = measurement_rows(reference)
    want_studies = studies(reference)
    assert len(want_studies[0]) == procs and len(want_studies[1]) == procs
    for i in range(repeats):
        db = tmp_path / f"r{i}" / "results.db"
        db.parent.mkdir()
        results = run_at_once([tune_cmd(db, s, strategy) for s, strategy in STUDIES[:procs]])
        assert_clean(results, f"repeat {i}")
        ours, optuna, trials = studies(db)
        assert (ours, optuna) == want_studies[:2], f"repeat {i}: a study is missing"
        assert all(trials[name] > 0 for name in optuna), f"repeat {i}: {trials}"
        assert measurement_rows(db) == want_rows, f"repeat {i}: other measurements"
        assert not list(db.parent.glob("*.lock")), "a lock file was left behind"


def measured_trials(db: Path) -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
    """(the labels of every trial that measured its point, every distinct point of a trial)
    of the file's only study."""
    attrs: dict[int, dict[str, Any]] = {}
    for trial_id, key, value in read_rows(
            db, "SELECT trial_id, key, value_json FROM trial_user_attributes"):
        attrs.setdefault(trial_id, {})[key] = json.loads(value)
    points = {(a["variant_label"], a["launch_label"]): a for a in attrs.values()
              if "variant_label" in a}
    measured = [(a["variant_label"], a["launch_label"]) for a in attrs.values()
                if a.get("outcome") == "measured"]
    return measured, set(points)


@pytest.mark.parametrize("procs,max_evals,repeats", [(2, 12, 3), (4, 10, 2)])
def test_one_study_run_by_several_processes_keeps_one_budget(procs, max_evals, repeats,
                                                             tmp_path):
    for i in range(repeats):
        db = tmp_path / f"r{i}" / "results.db"
        db.parent.mkdir()
        results = run_at_once([tune_cmd(db, "2^16", max_evals=max_evals)] * procs)
        assert_clean(results, f"repeat {i}")
        _, optuna, _ = studies(db)
        assert len(optuna) == 1
        measured, points = measured_trials(db)
        twice = [p for p, k in Counter(measured).items() if k > 1]
        assert not twice, f"repeat {i}: measured more than once: {twice}"
        assert len(points) == max_evals, f"repeat {i}: {len(points)} distinct points"
        evaluated = sum(json.loads(out)["sizes"][0]["evaluated"] for _, out, _ in results)
        assert evaluated == len(measured) == sum(measurement_rows(db).values())


def test_a_claim_holds_only_while_its_process_lives(tmp_path):
    """A process killed mid-measurement leaves its trial RUNNING: its claim must not keep the
    point from being measured, nor count against the budget, forever."""
    import socket

    import optuna

    from reducetune._space import Space, limits_for_arch
    from reducetune.store.study_share import CLAIM, StudyShare
    from reducetune.store.study_storage import open_storage

    space = Space("tunable", "float32", "sum", limits_for_arch("sm_90"),
                  (recording_meta(RECORDING) or {}).get("restrict"))
    dead_point, live_point = space.points()[:2]
    study = optuna.create_study(study_name="s", storage=open_storage(tmp_path / "r.db"))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for p, pid in ((dead_point, dead.pid), (live_point, os.getppid())):
        study.ask().set_user_attr(CLAIM, {"variant_label": p.variant_label, "pid": pid,
                                          "launch_label": p.launch_label,
                                          "host": socket.gethostname()})
    share = StudyShare(study, space.parse, lambda p: True, set())
    assert share.sync() == {live_point}


def test_a_point_measured_by_a_process_killed_before_telling_is_seen(tmp_path):
    """A process killed after its trial's labels were written (after the evaluation) and
    before telling leaves it RUNNING with a dead claim until a reap: its point counts as seen
    meanwhile, or another worker measures it again (seen once in CI: 'a point measured
    twice', test_distributed_tune's kill test)."""
    import socket

    import optuna

    from reducetune._space import Space, limits_for_arch
    from reducetune.store.study_share import CLAIM, StudyShare
    from reducetune.store.study_storage import open_storage

    space = Space("tunable", "float32", "sum", limits_for_arch("sm_90"),
                  (recording_meta(RECORDING) or {}).get("restrict"))
    measured, claimed = space.points()[:2]
    study = optuna.create_study(study_name="s", storage=open_storage(tmp_path / "r.db"))
    share = StudyShare(study, space.parse, lambda p: True, set())  # its reap at open is done
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for p, labelled in ((measured, True), (claimed, False)):
        t = study.ask()
        t.set_user_attr(CLAIM, {"variant_label": p.variant_label, "pid": dead.pid,
                                "launch_label": p.launch_label, "host": socket.gethostname()})
        if labelled:
            t.set_user_attr("launch_label", p.launch_label)
            t.set_user_attr("variant_label", p.variant_label)
            t.set_user_attr("outcome", "measured")
    assert share.sync() == set()  # no live claim
    assert measured in share.seen and claimed not in share.seen


def _open_store_at(barrier: Any, path: str, queue: Any) -> None:
    from reducetune.store.results import open_store

    barrier.wait()
    try:
        store = open_store(path)
        queue.put((store.migration or {}).get("backup", ""))
        store.close()
    except Exception as e:  # noqa: BLE001 - reported to the test, which fails on it
        queue.put(f"error: {e!r}")


def test_an_older_file_opened_by_several_processes_is_migrated_once(tmp_path):
    """Each opener used to see the older schema, keep its own copy (or overwrite another's,
    of the same name) and report a migration."""
    import multiprocessing
    import shutil

    ctx = multiprocessing.get_context("fork")
    for i in range(5):
        db = tmp_path / f"r{i}" / "results.db"
        db.parent.mkdir()
        shutil.copy(REPO / "tests" / "data" / "db" / "schema_v1.sqlite", db)
        barrier, queue = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open_store_at, args=(barrier, str(db), queue))
                 for _ in range(4)]
        for p in procs:
            p.start()
        backups = [queue.get(timeout=60) for _ in procs]
        for p in procs:
            p.join()
        assert not [b for b in backups if b.startswith("error")], backups
        assert len([b for b in backups if b]) == 1, f"repeat {i}: {backups}"
        assert len(list(db.parent.glob("*.bak"))) == 1
