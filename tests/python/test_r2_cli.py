"""Issue R2 (24), sections 2 (its second and third bullets), 3, 4 and 6, as the command line
meets them: each case runs ``reducetune`` in a process of its own (with a timeout, so that a
hang fails instead of blocking the suite) on copies of the committed recordings, and checks
the exit status, the one error line (no traceback, no link into a library's docs) and that
no file was created or changed where the command refused.

The refusals are the CLI's (cli/args.py, cli/output.py, the experiments' argument checks);
the store's own half of R2 is tests/python/test_r2_store.py."""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import stat
import statistics
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import reducetune
from conftest import NO_GPU, RECORDED, RECORDED_DIR

# The reducetune this test imported (the working tree's or the installed one), for the
# subprocesses too.
PACKAGE_ROOT = str(Path(reducetune.__file__).resolve().parents[1])
EXPERIMENTS = RECORDED_DIR / "experiments"
GRID = next((p for p in RECORDED if p.name == "h200_float32_sum_grid.db"), None)
ARABIC_1024 = "\u0661\u0660\u0662\u0664"  # Arabic-Indic digits: int() reads 1024
FULLWIDTH_1024 = "\uff11\uff10\uff12\uff14"  # fullwidth digits: int() reads 1024
pytestmark = pytest.mark.skipif(GRID is None, reason="no h200_float32_sum_grid recording")


def run(*argv: object, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = 180, stdout: int = subprocess.PIPE) -> tuple[int, str, str]:
    """The command line in a process of its own: (exit status, stdout, stderr)."""
    base = {**os.environ, "PYTHONPATH": PACKAGE_ROOT}
    try:
        proc = subprocess.run([sys.executable, "-m", "reducetune", *map(str, argv)],
                              stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=cwd,
                              timeout=timeout, env={**base, **(env or {})})
    except subprocess.TimeoutExpired:
        pytest.fail(f"reducetune {' '.join(map(str, argv))} hung for {timeout} s")
    return proc.returncode, proc.stdout or "", proc.stderr


def refused(code: int, err: str, *words: str) -> str:
    """Refused with one error line (argparse's usage lines before it are not errors) that
    names what is wrong; no traceback and no link into SQLAlchemy's docs."""
    assert code != 0, err
    assert "Traceback" not in err and "sqlalche.me" not in err, err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("reducetune"), err
    for w in words:
        assert w in lines[0], err
    return lines[0]


def snapshot(folder: Path) -> dict[str, str]:
    """Every path under folder: its bytes' digest, 'dir', or where a link points."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(folder))] = (
            f"link->{os.readlink(p)}" if stat.S_ISLNK(st.st_mode) else "dir"
            if stat.S_ISDIR(st.st_mode) else "fifo" if stat.S_ISFIFO(st.st_mode)
            else hashlib.sha256(p.read_bytes()).hexdigest())
    return out


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The recordings, decompressed once: harris and cascading experiments, the tune grid."""
    folder = tmp_path_factory.mktemp("r2-cli-originals")
    out = {"grid": Path(GRID)}
    for key, name in (("harris", "h200_harris"), ("cascading", "h200_cascading")):
        dst = folder / f"{name}.db"
        with lzma.open(EXPERIMENTS / f"{name}.db.xz") as fin, open(dst, "wb") as fout:
            shutil.copyfileobj(fin, fout)
        out[key] = dst
    return out


@pytest.fixture
def work(tmp_path: Path, originals: dict[str, Path]) -> Path:
    """A folder holding copies of the recordings (harris.db, cascading.db, grid.db) and a
    text file (notes.txt): what each case may read and must leave as it was."""
    for key, src in originals.items():
        shutil.copyfile(src, tmp_path / f"{key}.db")
    (tmp_path / "notes.txt").write_text("my notes\n")
    return tmp_path


def refused_untouched(work: Path, *argv: object, words: tuple[str, ...] = ()) -> str:
    """The command is refused in one line and every file of ``work`` keeps its bytes."""
    before = snapshot(work)
    code, _, err = run(*argv, cwd=work)
    line = refused(code, err, *words)
    assert snapshot(work) == before, "refused, but changed files"
    return line


# -- 2. Writes when the command is refused or only reads ------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["harris", "--replay", "harris.db", "--tables", ""], ["--tables"]),
    (["harris", "--replay", "harris.db", "--tables", ","], ["--tables"]),
    (["harris", "--replay", "harris.db", "--tables", "g80,nope"], ["nope"]),
    (["harris", "--replay", "missing.db"], ["missing.db"]),
    (["harris", "--replay", "notes.txt"], ["notes.txt"]),
    (["cascading", "--replay", "cascading.db", "--block-sizes", "abc"], ["--block-sizes"]),
    (["cascading", "--replay", "cascading.db", "--block-sizes", ""], ["--block-sizes"]),
    (["cascading", "--replay", "cascading.db", "--block-sizes", ARABIC_1024[:3]],
     ["--block-sizes"]),
    (["cascading", "--replay", "cascading.db", "--dtypes", ""], ["--dtypes"]),
    (["cascading", "--replay", "cascading.db", "--dtypes", "float32,half"], ["half"]),
    (["cascading", "--replay", "cascading.db", "--nested-max", ""], ["--nested-max"]),
    (["cascading", "--replay", "cascading.db", "--nested-max", "2^10..2^20"], ["--nested-max"]),
    (["harris", "--replay", "harris.db", "--ncu-tables", "g8O"], ["--ncu-tables"]),
], ids=lambda v: "|".join(v) if isinstance(v, list) else None)
def test_a_refused_experiment_creates_no_out_folder(work, argv, words):
    refused_untouched(work, "experiment", *argv, "--out", "report", words=tuple(words))


@pytest.mark.parametrize("experiment", ["harris", "cascading"])
def test_an_experiment_leaves_no_wal_or_shm_beside_its_input(work, experiment):
    db = work / f"{experiment}.db"
    code, _, err = run("experiment", experiment, "--replay", db, "--out", work / "report",
                       *(["--tables", "g80"] if experiment == "harris" else []), cwd=work)
    assert code == 0, err
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()


@pytest.mark.parametrize("folder_mode", [0o555, 0o755])
def test_an_experiment_leaves_a_read_only_input_as_it_was(work, folder_mode):
    inputs = work / "inputs"
    inputs.mkdir()
    db = inputs / "harris.db"
    shutil.copyfile(work / "harris.db", db)
    db.chmod(0o444)
    inputs.chmod(folder_mode)
    before = snapshot(inputs)
    try:
        code, _, err = run("experiment", "harris", "--replay", db, "--tables", "g80", "--out",
                           work / "report", cwd=work)
        after = snapshot(inputs)
    finally:
        inputs.chmod(0o755)
    assert code == 0, err
    assert after == before  # no -wal, no -shm, the same bytes


@pytest.mark.parametrize("experiment", ["harris", "cascading", "transfer",
                                        "search-efficiency"])
@pytest.mark.parametrize("out", ["new.db", "results.sqlite", "rec.db.xz", ""])
def test_out_named_like_a_database_or_empty_is_refused(work, experiment, out):
    inputs = {"harris": ["--replay", "harris.db"], "cascading": ["--replay", "cascading.db"],
              "transfer": ["--recording", "grid.db", "--from", "grid.db", "--seeds", "1"],
              "search-efficiency": ["--replay", "grid.db", "--seeds", "1"]}[experiment]
    line = refused_untouched(work, "experiment", experiment, *inputs, "--out", out,
                             words=("--out",))
    assert ("empty" in line) if out == "" else ("like a database" in line)


def test_an_existing_folder_named_like_a_database_is_still_a_folder(work):
    (work / "reports.db").mkdir()  # made by the user: the name is plainly a folder's
    code, _, err = run("experiment", "harris", "--replay", "harris.db", "--tables", "g80",
                       "--out", "reports.db", cwd=work)
    assert code == 0, err
    assert (work / "reports.db" / "report.md").exists()


# -- 3. Hangs -------------------------------------------------------------------------------

def test_export_json_to_dev_stdout_as_a_pipe_streams(work):
    code, want, err = run("export", "json", "--db", "grid.db", cwd=work, timeout=60)
    assert code == 0, err
    code, got, err = run("export", "json", "--db", "grid.db", "-o", "/dev/stdout", cwd=work,
                         timeout=60)
    assert code == 0, err
    assert json.loads(got) == json.loads(want)


@pytest.mark.parametrize("fmt", ["json", "header"])
def test_export_into_a_fifo_streams(work, fmt):
    assert run("export", fmt, "--db", "grid.db", "-o", "file.out", cwd=work)[0] == 0
    fifo = work / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, _, err = run("export", fmt, "--db", "grid.db", "-o", fifo, cwd=work, timeout=60)
    reader.join(30)
    assert code == 0, err
    assert got == [(work / "file.out").read_bytes()]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still the FIFO, not a file renamed over it


def test_export_to_a_symlink_writes_through_the_link(work):
    assert run("export", "json", "--db", "grid.db", "-o", "earlier.json", cwd=work)[0] == 0
    os.symlink("earlier.json", work / "link.json")
    code, _, err = run("export", "json", "--db", "grid.db", "--nondeterministic", "-o",
                       "link.json", cwd=work)
    assert code == 0, err
    assert (work / "link.json").is_symlink() and os.readlink(work / "link.json") == "earlier.json"
    _, want, _ = run("export", "json", "--db", "grid.db", "--nondeterministic", cwd=work)
    assert json.loads((work / "earlier.json").read_text()) == json.loads(want)
    assert "through the link" in err


def test_export_to_a_link_into_a_missing_folder_is_refused(work):
    os.symlink("gone/x.json", work / "dangling.json")
    refused_untouched(work, "export", "json", "--db", "grid.db", "-o", "dangling.json",
                      words=("link",))


# -- 4. Tracebacks instead of one line, and bad input accepted ------------------------------

@pytest.mark.parametrize("storage", ["sqlite:////missing/dir/x.db", "sqlite:///notes.txt"])
def test_a_storage_sqlalchemy_cannot_open_is_one_line(work, storage):
    refused_untouched(work, "tune", "--replay", "grid.db", "--db", "results.db", "--sizes",
                      "2^10", "--max-evals", "1", "--storage", storage)


@pytest.mark.parametrize("devices", ["2147483648", "4096", "0,4096", "", ",", ARABIC_1024[:1]])
def test_devices_beyond_any_gpu_or_malformed_are_refused_at_once(work, devices):
    refused_untouched(work, "tune", "--devices", devices, "--db", "results.db", "--sizes",
                      "2^10", "--max-evals", "1", words=("--devices",))


@pytest.mark.parametrize("bad, word", [(["--base", "nonesuch"], "nonesuch"),
                                       (["--restrict", "nonesuch=1"], "nonesuch"),
                                       (["--family", "nonesuch"], "nonesuch")])
def test_several_replay_workers_are_refused_once_not_once_per_worker(work, bad, word):
    line = refused_untouched(work, "tune", "--replay", "grid.db", "--devices", "0,1", "--db",
                             "results.db", "--sizes", "2^10", "--max-evals", "1", *bad,
                             words=(word,))
    assert "worker" not in line


def test_devices_in_replay_stay_c_ints(work):
    refused_untouched(work, "tune", "--replay", "grid.db", "--devices", "2147483648", "--db",
                      "results.db", "--sizes", "2^10", "--max-evals", "1", words=("--devices",))


@pytest.mark.parametrize("namespace", ["int", "class", "::a", "a::", "a::::b", "a::1b",
                                       "std::x", "__x", "my-app", ""])
def test_export_header_refuses_a_namespace_that_would_not_compile(work, namespace):
    refused_untouched(work, "export", "header", "--db", "grid.db", "--namespace", namespace,
                      "-o", "dispatch.hpp", words=("--namespace",))


@pytest.mark.parametrize("namespace", ["int", "class", "::a", "a::", "a::::b", "a::1b",
                                       "std::x", "__x", "my-app", ""])
def test_the_export_api_refuses_the_same_namespaces(work, namespace):
    """The rule is the exporter's own (db/cxx_names.hpp): the Python API, which has no
    argument parser in front of it, refuses what the command line refuses."""
    with pytest.raises(reducetune.InvalidConfiguration, match="namespace"):
        reducetune.export_header(work / "grid.db", namespace=namespace)


def test_export_header_takes_a_nested_namespace(work):
    code, out, err = run("export", "header", "--db", "grid.db", "--namespace", "my_app::rt",
                         cwd=work)
    assert code == 0, err
    assert "\nnamespace my_app::rt {" in out


@pytest.mark.parametrize("argv", [
    ["tune", "--replay", "grid.db", "--db", "results.db", "--sizes", ARABIC_1024],
    ["tune", "--replay", "grid.db", "--db", "results.db", "--sizes", "2^" + ARABIC_1024[:2]],
    ["tune", "--replay", "grid.db", "--db", "results.db", "--sizes", FULLWIDTH_1024],
    ["tune", "--replay", "grid.db", "--db", "results.db", "--max-evals", ARABIC_1024[:2]],
    ["tune", "--replay", "grid.db", "--db", "results.db", "--time-limit", FULLWIDTH_1024[:2]],
    ["tune", "--replay", "grid.db", "--db", "results.db", "--time-limit",
     FULLWIDTH_1024[:2] + "s"],
    ["tune", "--replay", "grid.db", "--db", "results.db", "--target", ARABIC_1024[:2]],
    ["tune", "--replay", "grid.db", "--db", "results.db", "--devices", ARABIC_1024[1]],
    ["show", "--db", "grid.db", "--n", ARABIC_1024],
    ["show", "--db", "grid.db", "--limit", FULLWIDTH_1024[:2]],
], ids=lambda v: " ".join(v[:1] + v[-2:]))
def test_numbers_in_digits_other_than_0_9_are_refused(work, argv):
    refused_untouched(work, *argv)


@pytest.mark.parametrize("command", ["show", "history"])
@pytest.mark.parametrize("n", ["1..5", "2^10,2^20", "2^10 2^20", "", "0", "2^41"])
def test_show_and_history_take_one_size_in_range(work, command, n):
    refused_untouched(work, command, "--db", "grid.db", "--n", n)


def test_best_names_the_database_it_was_given(work):
    line = refused_untouched(work, "best", "--db", "grid.db", "--n", "2^20", "--device",
                             "nosuch", words=("nosuch", "grid.db"))
    assert ":memory:" not in line


def test_the_runtime_benchmark_takes_ranged_numbers_in_digits_0_9(work):
    before = snapshot(work)
    for argv in (["--samples", ARABIC_1024[:2]], ["--samples", "1"],
                 ["--sample-time", FULLWIDTH_1024[:1]], ["--sample-time", "0"]):
        proc = subprocess.run(
            [sys.executable, "-m", "reducetune.benchmarks.runtime", "--out", "bench", *argv],
            capture_output=True, text=True, cwd=work, timeout=120,
            env={**os.environ, "PYTHONPATH": PACKAGE_ROOT})
        assert proc.returncode == 2 and "[range:" in proc.stderr, proc.stderr
        refused(proc.returncode, proc.stderr.replace("python -m reducetune.benchmarks.runtime",
                                                     "reducetune"), argv[0])
    assert snapshot(work) == before


def test_compile_refuses_an_unknown_family(work):
    refused_untouched(work, "compile", "--family", "nosuch", "--sample", "0",
                      words=("nosuch", "tunable"))


@pytest.mark.parametrize("experiment", ["harris", "cascading"])
@pytest.mark.parametrize("second", [["--replay", "{db}"], ["--replay", "./{db}"],
                                    ["--also", "{db}"], ["--also", "link.db"]])
def test_an_experiment_takes_each_database_once(work, experiment, second):
    db = f"{experiment}.db"
    os.symlink(db, work / "link.db")
    refused_untouched(work, "experiment", experiment, "--replay", db,
                      *[a.format(db=db) for a in second], "--out", "report",
                      words=("each database once",))


@pytest.mark.parametrize("argv", [
    ["search-efficiency", "--replay", "grid.db", "--replay", "harris.db"],
    ["transfer", "--recording", "grid.db", "--recording", "harris.db", "--from", "grid.db"],
    ["transfer", "--recording", "grid.db", "--from", "grid.db", "--from", "harris.db"],
], ids=["search-efficiency --replay", "transfer --recording", "transfer --from"])
def test_an_option_taking_one_database_refuses_a_second(work, argv):
    # argparse would keep the last value and drop the first without a word
    refused_untouched(work, "experiment", *argv, "--out", "report", words=("given twice",))


def test_devices_with_a_missing_db_says_why_on_stderr(work):
    line = refused_untouched(work, "devices", "--db", "missing.db", words=("missing.db",))
    assert line.startswith("reducetune: error: ")


@pytest.mark.skipif(NO_GPU is None, reason="this machine has a GPU: devices lists it")
def test_devices_with_no_gpu_and_no_default_database_says_why_on_stderr(work):
    before = snapshot(work)
    code, _, err = run("devices", cwd=work, env={"XDG_DATA_HOME": str(work / "data")})
    assert code == 1
    refused(code, err, "no GPU", "no database")
    assert snapshot(work) == before


def test_a_multi_line_library_message_is_printed_as_one_line():
    from reducetune.cli.app import one_line

    e = RuntimeError("(sqlite3.OperationalError) unable to open database file\n"
                     "(Background on this error at: https://sqlalche.me/e/21/e3q8)")
    assert one_line(e) == "(sqlite3.OperationalError) unable to open database file"


# -- 6. Honest verdicts and provenance ------------------------------------------------------

def test_bench_calls_an_exact_tie_a_tie():
    from reducetune.cli.bench import verdict

    m = {"status": "ok", "median_s": 4.1e-6, "rel_stddev": 0.0}
    assert verdict(m, dict(m)) == "tie"
    assert verdict(m, {**m, "median_s": 4.2e-6}) == "ahead"


def test_runtime_benchmark_records_each_contenders_noise():
    from reducetune.benchmarks.runtime import interleaved_stats

    # each contender's calls in order: 3 warm-up calls, then one sample per round
    series = {"a": iter([9.0, 9.0, 9.0, 1.0, 3.0, 2.0, 2.0, 2.0, 2.0]), "b": iter([5.0] * 9)}
    stats = interleaved_stats({k: (lambda it=it: next(it)) for k, it in series.items()}, 6)
    a = [1.0, 3.0, 2.0, 2.0, 2.0, 2.0]
    assert stats["b"] == {"median_s": 5.0, "rel_stddev": 0.0, "samples": 6}
    assert stats["a"]["rel_stddev"] == pytest.approx(statistics.stdev(a) / statistics.fmean(a))


def test_runtime_benchmark_records_the_commit_and_the_protocol():
    from reducetune.benchmarks.runtime import provenance

    doc = provenance(200, 0.3)
    # the package's own source tree's commit; "unknown" for an installed copy, even one that
    # lies inside another repository (CI's site-packages is in the pyenv checkout)
    root = Path(reducetune.__file__).resolve().parents[2]
    top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True).stdout.strip()
    git = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty", "--tags"],
                         capture_output=True, text=True)
    own = top == str(root) and git.returncode == 0
    want = git.stdout.strip() if own else "unknown"
    assert doc["commit"] == want and doc["commit"]
    assert "200 calls per contender" in doc["protocol"]["application"]
    assert "0.3 s" in doc["protocol"]["tuner"] and "L2" in doc["protocol"]["tuner"]


def test_runtime_report_shows_the_commit_protocol_and_noise(tmp_path):
    """A SYNTHETIC result (not a measurement): the report says what the JSON records."""
    from reducetune.benchmarks import _runtime_report as rep
    from reducetune.benchmarks.runtime import provenance

    row = {"dtype": "float32", "op": "sum", "n": 1 << 20, "correct": True,
           "choice": {"source": "tuned", "variant": "tunable.float32.sum.bs_256",
                      "launch": "ept_16.cap_0", "launches": 1},
           "app_s": {"reducer": 8e-6, "cub": 9e-6}, "app_noise": {"reducer": 0.012, "cub": 0.03},
           "protocol": {"tuned": {"status": "ok", "median_s": 5e-6, "rel_stddev": 0.004},
                        "cub": {"status": "ok", "median_s": 6e-6, "rel_stddev": 0.005}}}
    result = {"device": {"name": "fixture GPU"}, "ceiling_gbps": 3000.0, "samples": 10,
              "rows": [row], "versions": {"torch": "t", "cupy": "c"}, "date": "2026-11-26",
              "command": "fixture", **provenance(10, 0.3)}
    rep.write(result, tmp_path / "bench")
    md = (tmp_path / "bench.md").read_text()
    assert f"reducetune commit: {result['commit']}" in md
    assert "protocol, application: " in md and "protocol, tuner: " in md
    assert "reducer 1.2 % (max 1.2 %)" in md and "cub 3.0 %" in md
    assert "protocol tuned 0.4 %" in md


def test_bench_json_states_its_protocol():
    """``bench --json`` (GPU) carries the commit (test above) and this text: the caps the
    command was given, and where each row's noise is."""
    import argparse

    from reducetune.cli.bench import _protocol

    text = _protocol(argparse.Namespace(max_samples=321, sample_time=0.25))
    assert "at most 321 cold samples" in text and "after 0.25 s" in text
    assert "rel_stddev" in text and "L2 flushed" in text
