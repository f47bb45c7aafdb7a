"""Every database committed in the repository (the recordings under tests/data/recorded/ and
the tune databases under docs/results/), migrated to the current schema, exports rules an
application can trust:

- every rule's compile and launch parameters are those its labels name (export json, export
  header, best --json alike), and the rule is launchable with the point's own block size;
- the migration changes no answer: for each (device, dtype, op, n) the best point is the one
  plain SQL finds in the file as committed (flags decided by the C++ space from the labels);
- the Optuna studies stored in a file agree: each study's best_params is its size's rule.

These are real measurements (H200); the test only reads copies of them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import lzma
import shutil
import sqlite3
from pathlib import Path

import pytest

import reducetune
from reducetune import _core

from header_rules import header_rules

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted([*REPO.glob("tests/data/recorded/*.db.xz"), *REPO.glob("docs/results/*.db.xz"),
                    *REPO.glob("docs/results/*/*.db.xz")])  # several GPUs and models included


def test_the_committed_databases_are_found():
    """Every database file under the repository's source folders is one this file checks, but
    the experiments' recordings (replayed to their reports by test_experiment_harris.py and
    test_experiment_cascading.py): a database committed where COMMITTED's globs do not look
    fails here instead of going unchecked."""
    experiments = REPO / "tests" / "data" / "recorded" / "experiments"
    on_disk = {p for folder in ("docs", "tests", "examples", "scripts")
               for pattern in ("*.db.xz", "*.db") for p in (REPO / folder).rglob(pattern)
               if p.parent != experiments}
    assert on_disk == set(COMMITTED), sorted(str(p) for p in on_disk ^ set(COMMITTED))
    names = {p.name for p in COMMITTED}
    assert "h200_float32_sum_grid.db.xz" in names
    assert "h200_2026-11-22_tune_float32.db.xz" in names


@pytest.fixture(scope="module", params=COMMITTED, ids=lambda p: p.name)
def committed(request, tmp_path_factory):
    """(the file as committed, a migrated copy); neither is the repository's file."""
    folder = tmp_path_factory.mktemp("committed")
    original = folder / request.param.name.removesuffix(".xz")
    with lzma.open(request.param, "rb") as fin, open(original, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)
    migrated = folder / ("migrated-" + original.name)
    shutil.copyfile(original, migrated)
    reducetune.open_store(migrated, create=False).close()  # migrates: a write command's step
    yield original, migrated
    _rules.cache_clear()  # this file's exports, no longer asked for


def _space(family: str, dtype: str, op: str):
    return reducetune.Space(family, dtype, op, reducetune.limits_for_arch("sm_90"))


def _selected(label: str, launch: str, spaces: dict, selection: tuple[bool, bool]) -> bool:
    """Whether the space admits the point under (allow_flagged, nondeterministic)."""
    family, dtype, op = label.split(".")[:3]
    key = (family, dtype, op)
    if key not in spaces:
        spaces[key] = _space(*key)
    return spaces[key].selected(spaces[key].parse(label, launch), *selection)


# (allow_flagged, nondeterministic): the default, and each widening
SELECTIONS = [(False, False), (True, False), (False, True), (True, True)]


def _model_first_uuid(db: Path) -> dict[str, str]:
    """{device uuid: uuid of its model's first device}: the exports answer per GPU model
    (records.hpp, model_fields; asked of the core, not restated), under that device's UUID."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as c:
        c.row_factory = sqlite3.Row
        devices = [dict(r) for r in c.execute("SELECT * FROM rt_devices ORDER BY id")]
    first: dict[str, str] = {}
    for d in devices:
        first.setdefault(_core.device_model_key(d), d["uuid"])
    return {d["uuid"]: first[_core.device_model_key(d)] for d in devices}


def _best_before(original: Path, selection: tuple[bool, bool]) -> dict[tuple, tuple[str, str]]:
    """{(model's first device uuid, dtype, op, n): (variant, launch)}: the fastest ok
    measurement of the committed file on each GPU model, by SQL over its own rows (lowest
    median, then the labels, then the lowest id: the store's order,
    db/reducetune/db/catalog.cpp)."""
    query = ("SELECT d.uuid, w.dtype, w.op, w.n, v.label, m.launch_label FROM rt_measurements m"
             " JOIN rt_variants v ON v.id = m.variant_id JOIN rt_workloads w"
             " ON w.id = m.workload_id JOIN rt_devices d ON d.id = m.device_id"
             " WHERE m.status = 'ok' AND m.median_s IS NOT NULL"
             " ORDER BY m.median_s, v.label, m.launch_label, m.id")
    with contextlib.closing(sqlite3.connect(f"file:{original}?mode=ro", uri=True)) as c:
        rows = c.execute(query).fetchall()
    model = _model_first_uuid(original)
    best: dict[tuple, tuple[str, str]] = {}
    spaces: dict = {}
    for uuid, dtype, op, n, label, launch in rows:
        key = (model[uuid], dtype, op, n)
        if key in best or not _selected(label, launch, spaces, selection):
            continue
        best[key] = (label, launch)
    return best


@functools.cache
def _rules(migrated: Path, allow_flagged: bool,
           nondeterministic: bool = False) -> list[tuple[dict, dict, dict]]:
    """(device, table, rule) of every rule of export json; asked once per file and selection
    (several tests read the same export, and none changes it)."""
    doc = json.loads(reducetune.export_json(migrated, allow_flagged=allow_flagged,
                                            nondeterministic=nondeterministic))
    return [(d, t, r) for d in doc["devices"] for t in d["tables"] for r in t["rules"]]


@pytest.mark.parametrize("allow_flagged", [False, True])
def test_every_rule_names_the_parameters_of_its_labels(committed, allow_flagged):
    _, migrated = committed
    rules = _rules(migrated, allow_flagged, False)
    assert rules
    for _, table, r in rules:
        point = _space(r["family"], table["dtype"], table["op"]).parse(r["variant"], r["launch"])
        assert r["compile_parameters"] == point.compile_params, r["variant"]
        assert r["launch_parameters"] == point.launch_params, (r["variant"], r["launch"])
        assert r["flags"] == [] or allow_flagged
        assert r["launchable"], r.get("why")
        assert r["block_size"] == point.compile_params["block_size"]
        assert r["determinism"] == point.determinism
        assert r["grid"]["items_per_block"] == (point.compile_params["block_size"]
                                                * point.launch_params["elements_per_thread"])
        assert r["kernels"] and all(k["lowered"].startswith("_Z") for k in r["kernels"])


@pytest.mark.parametrize("allow_flagged", [False, True])
def test_header_and_best_json_agree_with_export_json(committed, cli, allow_flagged):
    _, migrated = committed
    extra = ["--allow-flagged"] if allow_flagged else []
    code, header, err = cli("export", "header", "--db", migrated, *extra)
    assert code == 0, err
    by_size = {(d["uuid"], t["dtype"], t["op"], r["bucket_n"]): r
               for d, t, r in _rules(migrated, allow_flagged, False)}
    names = {d["name"]: d["uuid"] for d, _, _ in _rules(migrated, allow_flagged, False)}
    in_header = header_rules(header)
    assert len(in_header) == len(by_size)
    for h in in_header:
        r = by_size[(names[h["device"]], h["dtype"], h["op"], h["bucket_n"])]
        assert (h["variant"], h["launch"], h["min_n"]) == (r["variant"], r["launch"], r["min_n"])
        text = {k: (v if isinstance(v, str) else json.dumps(v)) for k, v in
                r["compile_parameters"].items()}
        assert h["compile_parameters"] == text
        assert h["launch_parameters"] == {k: str(v) for k, v in r["launch_parameters"].items()}
        assert (h["block_size"], h["items_per_block"], h["max_blocks"], h["protocol"]) == (
            r["block_size"], r["grid"]["items_per_block"], r["grid"]["max_blocks"], r["protocol"])
    for (uuid, dtype, op, n), r in list(by_size.items())[:: max(1, len(by_size) // 6)]:
        code, out, err = cli("best", "--db", migrated, "--device", uuid, "--dtype", dtype,
                             "--op", op, "--n", str(n), "--json", *extra)
        assert code == 0, err
        b = json.loads(out)
        assert {k: b[k] for k in r} == r


@pytest.mark.parametrize("selection", SELECTIONS)
def test_the_migration_keeps_every_best_point(committed, selection):
    original, migrated = committed
    before = _best_before(original, selection)
    rules = _rules(migrated, *selection)
    after = {(d["uuid"], t["dtype"], t["op"], r["bucket_n"]): (r["variant"], r["launch"])
             for d, t, r in rules}
    assert after == before
    assert all(r["determinism"] == "run_to_run" for _, _, r in rules) or selection[1]


def test_each_optuna_study_best_is_its_sizes_rule(committed):
    """Per (GPU model, dtype, op, n): the fastest of its studies' bests is its size's rule
    (a size may have several studies: one per strategy, det or all)."""
    import optuna

    _, migrated = committed
    # One storage for every study: a URL would open (and check) the file again for each one.
    storage = optuna.storages.get_storage(f"sqlite:///{migrated}")
    names = optuna.study.get_all_study_names(storage)
    # these studies predate the deterministic default: they searched every point
    rules = {(d["uuid"], t["dtype"], t["op"], r["bucket_n"]): r
             for d, t, r in _rules(migrated, True, True)}
    model = _model_first_uuid(migrated)
    with contextlib.closing(sqlite3.connect(f"file:{migrated}?mode=ro", uri=True)) as c:
        c.row_factory = sqlite3.Row
        by_key = {_core.device_model_key(dict(d)): model[d["uuid"]]
                  for d in c.execute("SELECT * FROM rt_devices")}
    # (Optuna's best value, the completed trials) of each study with one; each study's trials
    # are read once (Optuna's best_trials and trials would read and copy them each time).
    studies: dict[tuple, list[tuple[float, list]]] = {}
    for name in names:
        study = optuna.load_study(study_name=name, storage=storage)
        complete = [t for t in study.get_trials(deepcopy=False)
                    if t.state == optuna.trial.TrialState.COMPLETE]
        if len(study.directions) != 1 or not complete:
            continue
        family, dtype, op, size = name.split("@")[0].split(".")[:4]
        where = name.split("@", 1)[1]  # a device UUID (older studies) or model:KEY
        first = model.get(where) or by_key[where.removeprefix("model:")]
        studies.setdefault((first, dtype, op, int(size.removeprefix("n_"))), []).append(
            (study.best_value, complete))
    for key, group in studies.items():
        r = rules[key]
        fastest = min(best for best, _ in group)
        assert fastest == pytest.approx(r["median_s"]), key
        # equal medians: the store takes the smallest labels, Optuna the first trial; the
        # rule must be one of the best trials either way
        tied = [dict(t.params) for _, trials in group for t in trials if t.value == fastest]
        assert {**r["compile_parameters"], **r["launch_parameters"]} in tied, key
    if "tune" in migrated.name:
        assert len(studies) > 0
