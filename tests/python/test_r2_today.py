"""Issue R2 (24: hangs, tracebacks) applied to what was added on 2026-11-26: ``reducetune
priors``, ``tune --priors``, ``tune --family axis``, small ``tune --time-limit`` values in
replay, ``reducetune.reduce(x, axis=...)`` and ``AxisReducer`` argument errors without a GPU,
and ``scripts/golden`` with a golden file missing.

Each command runs in a process of its own with a timeout (test_r2_cli.run: a hang fails), on
copies of the committed H200 grid recording; a refusal is one error line without a traceback,
exit status 2 for a usage error (1 for a file the store cannot read), and every file of the
folder keeps its bytes. The Python API's refusals are one-line InvalidConfiguration errors."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

import reducetune
from conftest import RECORDED_DIR, recording_meta
from reducetune import InvalidConfiguration
from reducetune.store.priors import FORMAT, SHIPPED
from test_r2_cli import GRID, refused, run, snapshot
from test_reduce_axis_args import _FakeTensor

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(GRID is None, reason="no h200_float32_sum_grid recording")


def _device(**fields: object) -> dict:
    """One device of a priors table, as 'reducetune priors' writes it, with ``fields`` changed."""
    return {"name": "NVIDIA X", "model": "x", "cc": [9, 0], "sm_count": 132,
            "peak_gbps": 4800.0, "files": [], "bests": {}, **fields}


def _table(*devices: dict, fmt: str = FORMAT) -> str:
    return json.dumps({"format": fmt, "per_bucket": 3, "devices": list(devices)})


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder holding what each case may read and must leave as it was: the recording as a
    results file (grid.db) and packed (grid.db.xz), a text file, an empty file, a text file
    named like a packed recording, a folder, and priors tables good and bad."""
    shutil.copyfile(GRID, tmp_path / "grid.db")
    shutil.copyfile(GRID, tmp_path / "results.db")  # a --db that tune would write into
    shutil.copyfile(RECORDED_DIR / "h200_float32_sum_grid.db.xz", tmp_path / "grid.db.xz")
    (tmp_path / "notes.txt").write_text("my notes\n")
    (tmp_path / "empty.db").write_bytes(b"")
    (tmp_path / "fake.db.xz").write_text("not xz\n")
    (tmp_path / "adir").mkdir()
    tables = {"corrupt": "{", "empty": "", "list": "[1, 2]", "foreign": '{"entries": []}',
              "v2": _table(_device(), fmt="reducetune-priors/2"), "no_device": _table(),
              "no_devices_key": json.dumps({"format": FORMAT}),
              "partial": _table({"name": "NVIDIA X"}), "cc": _table(_device(cc=[9])),
              "sm0": _table(_device(sm_count=0)), "peak0": _table(_device(peak_gbps=0)),
              "bucket0": _table(_device(bests={"tunable.float32.sum": {"0": []}}))}
    for name, text in tables.items():
        (tmp_path / f"{name}.json").write_text(text)
    return tmp_path


def refused_untouched(work: Path, code: int, *argv: object, words: tuple[str, ...] = ()) -> str:
    """Refused in one line with exit status ``code``; every file of ``work`` keeps its bytes."""
    before = snapshot(work)
    got, out, err = run(*argv, cwd=work, timeout=120)
    line = refused(got, err, *words)
    assert got == code, err
    assert out == ""
    assert snapshot(work) == before, "refused, but changed files"
    return line


# -- reducetune priors ----------------------------------------------------------------------

@pytest.mark.parametrize("argv, code, words", [
    (["-o", "out.json", "missing.db"], 2, ["missing.db", "no such file"]),
    (["-o", "out.json", "missing.db.xz"], 2, ["missing.db.xz", "no such file"]),
    (["-o", "out.json", "adir"], 2, ["adir", "a folder"]),
    (["-o", "out.json", "grid.db", "missing.db"], 2, ["missing.db"]),
    (["-o", "adir", "grid.db"], 2, ["-o", "folder"]),
    (["-o", "", "grid.db"], 2, ["-o", "empty"]),
    # the results file given as -o was replaced by the table (data lost)
    (["-o", "grid.db", "grid.db"], 2, ["one of the results files"]),
    (["-o", "grid.db", "grid.db.xz"], 2, ["is a database"]),
    (["-o", "grid.db.xz", "grid.db"], 2, ["is a database"]),
    (["-o", "out.json", "--model", "nope", "grid.db"], 2, ["--model nope", "NVIDIA H200",
                                                           "nothing written"]),
    (["-o", "out.json", "--model", "", "grid.db"], 2, ["--model is empty"]),
    (["-o", "out.json", "notes.txt"], 1, ["notes.txt", "not a readable SQLite"]),
    (["-o", "out.json", "empty.db"], 1, ["empty.db", "no reducetune results"]),
    (["-o", "out.json", "fake.db.xz"], 1, ["cannot decompress fake.db.xz"]),
    (["-o", "out.json", "grid.db", "notes.txt"], 1, ["notes.txt"]),
    (["-o", "no-folder/out.json", "grid.db"], 1, ["cannot write", "no-folder"]),
], ids=lambda v: "|".join(v) if isinstance(v, list) else None)
def test_priors_refuses_in_one_line_and_writes_nothing(work, argv, code, words):
    refused_untouched(work, code, "priors", *argv, words=tuple(words))


def test_priors_of_the_same_file_twice_is_the_table_of_it_once(work):
    for out, files in (("once.json", ["grid.db"]), ("twice.json", ["grid.db", "grid.db"])):
        code, _, err = run("priors", "-o", out, *files, cwd=work, timeout=120)
        assert code == 0, err
    assert (work / "once.json").read_bytes() == (work / "twice.json").read_bytes()


def test_priors_of_two_packed_files_of_one_name_reads_both(work):
    """a/x.db.xz and b/x.db.xz (the H200 and the H100 grid): both models, not one file twice
    (they were decompressed to one temporary name, the second over the first)."""
    for folder, name in (("a", "h200"), ("b", "h100")):
        (work / folder).mkdir()
        shutil.copyfile(RECORDED_DIR / f"{name}_float32_sum_grid.db.xz", work / folder / "x.db.xz")
    code, _, err = run("priors", "-o", "both.json", "a/x.db.xz", "b/x.db.xz", cwd=work,
                       timeout=120)
    assert code == 0, err
    names = [d["name"] for d in json.loads((work / "both.json").read_text())["devices"]]
    assert any("H100" in n for n in names) and any("H200" in n for n in names), names


# -- tune --priors, --family axis, --time-limit ----------------------------------------------

@pytest.mark.parametrize("value, words", [
    ("", ["--priors is empty"]), (" ", ["--priors is empty"]),
    ("AUTO", ["no such file", "auto, on, off"]), ("of", ["no such file"]),
    ("adir", ["a folder"]), ("grid.db", ["not JSON text"]),
    ("corrupt.json", ["JSONDecodeError"]), ("empty.json", ["JSONDecodeError"]),
    ("list.json", ["format"]), ("foreign.json", ["format None"]),
    ("v2.json", ["reducetune-priors/2"]), ("no_device.json", ["names no device"]),
    ("no_devices_key.json", ["devices"]), ("partial.json", ["bests"]),
    ("cc.json", ["cc [9]"]), ("sm0.json", ["sm_count 0"]), ("peak0.json", ["peak_gbps 0"]),
    ("bucket0.json", ["bucket size 0"]),
])
def test_tune_refuses_a_bad_priors_value_before_the_results_file(work, value, words):
    """Refused before the recording is replayed or --db (an existing results file) opened;
    sm_count 0 and a cc of one number were tracebacks once the nearest device was asked."""
    line = refused_untouched(work, 2, "tune", "--replay", "grid.db", "--db", "results.db",
                             "--sizes", "2^16", "--max-evals", "2", "--priors", value,
                             words=tuple(words))
    assert "--priors" in line


def test_tune_of_the_axis_family_with_a_malformed_shape_is_refused_first(work):
    # the axis family is tuned per shape (--shapes): a malformed one is refused before the
    # recording, the results file or the priors table is opened
    line = refused_untouched(work, 2, "tune", "--family", "axis", "--shapes", "4096x64",
                             "--replay", "grid.db", "--db", "results.db", "--priors",
                             "missing.json", "--time-limit", "1s",
                             words=("--shapes", "'4096x64' is not a shape"))
    assert "OUTERxRxINNER" in line


@pytest.mark.parametrize("value", ["0", "-1", "0s", "nan", "1x", ""])
def test_tune_refuses_a_time_limit_of_nothing(work, value):
    refused_untouched(work, 2, "tune", "--replay", "grid.db", "--db", "new.db",
                      "--time-limit", value, words=("--time-limit",))


# "1m" itself would replay for a whole minute of the test command's time; the parse of minutes
# is test_numeric_options', and a 60 s run is test_one_minute's.
@pytest.mark.parametrize("value, most_s", [("1e-9", 120), ("1s", 120)])
def test_a_small_time_limit_in_replay_answers_and_ends(work, value, most_s):
    """Every size is answered (at least one point measured) and the run stops on its limit,
    within the test's timeout (a hang fails)."""
    restrict = recording_meta(GRID)["restrict"]
    args = [a for k, v in restrict.items() for a in ("--restrict", f"{k}={','.join(v)}")]
    code, out, err = run("tune", "--replay", "grid.db", "--db", "new.db", "--sizes", "2^16",
                         *args, "--time-limit", value, "--json", "--quiet", cwd=work,
                         timeout=most_s)
    assert code == 0, err
    assert "Traceback" not in err
    (size,) = json.loads(out)["sizes"]
    assert size["evaluated"] >= 1 and size["best"] is not None
    assert size["stopped"] == "time-limit"


# -- reducetune.reduce(x, axis=...) and AxisReducer, no GPU ---------------------------------

def _one_line(call) -> str:
    with pytest.raises(InvalidConfiguration) as e:
        call()
    assert "\n" not in str(e.value)
    return str(e.value)


@pytest.mark.parametrize("kwargs, words", [
    ({"axis": True}, "not bool"), ({"axis": 1.0}, "not float"), ({"axis": "0"}, "not str"),
    ({"axis": {0}}, "not set"), ({"axis": 3}, "out of range"), ({"axis": -4}, "out of range"),
    ({"axis": (0, 0)}, "names an axis twice"), ({"axis": (0, 2)}, "not adjacent"),
    ({"axis": ()}, "axis=None"), ({"axis": []}, "axis=None"),
    ({"axis": (1, None)}, "each axis is an int"), ({"axis": (0, 1.0)}, "each axis is an int"),
    ({"axis": 1, "keepdims": 1}, "keepdims must be True or False"),
    ({"axis": 1, "keepdims": "yes"}, "keepdims must be True or False"),
    ({"axis": 1, "keepdims": None}, "keepdims must be True or False"),
    ({"axis": 1, "op": "median"}, "unknown operator 'median'"),
    ({"axis": 1, "op": ""}, "unknown operator ''"),
    ({"axis": 1, "op": "SUM"}, "unknown operator 'SUM'"),
    ({"axis": 1, "table": "t.json"}, "no such file"),  # a tuned table per shape: read, so named
    ({"axis": 1, "db": "r.db"}, "no results database at r.db"),
    ({"axis": 1, "nondeterministic": True}, "whole-array points"),
], ids=repr)
def test_reduce_with_a_bad_axis_argument_says_what_is_wrong(kwargs, words):
    kwargs = dict(kwargs)
    op = kwargs.pop("op", "sum")
    assert words in _one_line(lambda: reducetune.reduce(_FakeTensor((2, 3, 4)), op, **kwargs))


@pytest.mark.parametrize("dtype, op, words", [
    ("torch.uint8", "sum", "holds uint8"), ("torch.bool", "max", "holds bool"),
    ("torch.int32", "mean", "mean of int32"),
])
def test_reduce_with_an_axis_refuses_an_unsupported_type(dtype, op, words):
    x = _FakeTensor((4, 4), dtype=dtype)
    assert words in _one_line(lambda: reducetune.reduce(x, op, axis=0))


@pytest.mark.parametrize("dtype, op, words", [
    ("uint8", "sum", "unknown dtype 'uint8'"), ("", "sum", "unknown dtype ''"),
    (None, "sum", "unknown dtype None"), ("float32", "median", "unknown operator"),
    ("int64", "mean", "mean of int64"),
])
def test_axis_reducer_refuses_an_unknown_type_or_operator(dtype, op, words):
    assert words in _one_line(lambda: reducetune.AxisReducer(dtype, op))


@pytest.mark.parametrize("content, words", [
    (None, "no such file"), ("{", "is not JSON"), ("", "is not JSON"),
    (b"SQLite format 3\0\xd4\xff", "is not JSON"),
    ('{"format": "x"}', "no 'entries'"), ('{"entries": 5}', "needs outer, r, inner"),
    ("[1, 2]", "needs outer, r, inner"), ('[{"outer": 1}]', "needs outer, r, inner"),
    ('[{"outer": -1, "r": 0, "inner": 1, "variant": "v"}]', "at least 1"),
], ids=repr)
def test_axis_reducer_refuses_a_bad_table_file_in_one_line(tmp_path, content, words):
    path = tmp_path / "table.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert words in _one_line(lambda: reducetune.AxisReducer("float32", "sum", table=path))


def test_axis_reducer_refuses_a_folder_and_a_priors_table(tmp_path):
    assert "a folder" in _one_line(lambda: reducetune.AxisReducer("float32", table=tmp_path))
    line = _one_line(lambda: reducetune.AxisReducer("float32", table=SHIPPED))
    assert "no 'entries'" in line and "devices" in line


def test_axis_reducer_takes_an_entries_dict_as_its_file_holds_it():
    r = reducetune.AxisReducer("float32", "sum", table={"entries": []})
    assert r.dtype == "float32" and r.op == "sum"


# -- scripts/golden -------------------------------------------------------------------------

def test_golden_names_each_missing_golden_file_replays_included(tmp_path, monkeypatch, capsys):
    """A replay's golden file missing was read (FileNotFoundError); now named like a
    database's. The smallest committed database and one replay, against an empty folder."""
    loader = importlib.machinery.SourceFileLoader("golden_r2", str(REPO / "scripts" / "golden"))
    golden = importlib.util.module_from_spec(importlib.util.spec_from_loader("golden_r2", loader))
    loader.exec_module(golden)
    small = min(golden.committed(), key=lambda p: p.stat().st_size)
    monkeypatch.setattr(golden, "committed", lambda: [small])
    monkeypatch.setattr(golden, "REPLAYS", {"replay_tpe": golden.REPLAYS["replay_tpe"]})
    monkeypatch.setattr(golden, "GOLDEN", tmp_path)
    monkeypatch.setattr("sys.argv", ["golden"])
    assert golden.main() == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for name in (small.name.removesuffix(".db.xz"), "replay_tpe"):
        assert f"golden: {name} has no golden file (tests/data/golden/{name}.json.xz" in err
