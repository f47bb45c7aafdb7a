"""Issue 11, bad numeric input: every numeric option of every command is read by one parser
with a range (commands/_args.py), shows that range in its help, and refuses a value outside
it with one error line and exit status 2, never a traceback. Sizes have one limit, 2^40,
however they are written, and a range of too many sizes is refused before it is expanded.
Without a GPU, ``tune`` says so, says what to do instead, and leaves no results file behind.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reducetune import _core, errors
from reducetune.cli import build_parser, main

SEED_RANGE = "[range: 0 to 4294967295]"
COUNT_RANGE = "[range: 1 to 2147483647]"


def run_cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    """(exit status, stderr) of the command line in this process; argparse's exit included.
    Any other exception escapes, and fails the test: that is the traceback a user would see."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().err


def error_line(err: str) -> str:
    """The one error line of stderr (argparse's usage lines before it are not errors)."""
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("args, option, range_text", [
    (["--seed", "-1"], "--seed", SEED_RANGE),
    (["--seed", "4294967296"], "--seed", SEED_RANGE),  # Optuna seeds numpy: 32 bits
    (["--seed", "9" * 5000], "--seed", SEED_RANGE),  # more digits than int() reads
    (["--time-limit", "-5"], "--time-limit", "[range: above 0 to 8760h]"),
    (["--time-limit", "nan"], "--time-limit", "[range: above 0 to 8760h]"),
    (["--time-limit", "0"], "--time-limit", "[range: above 0 to 8760h]"),
    (["--time-limit", "soon"], "--time-limit", "[range: above 0 to 8760h]"),
    (["--device", "-1"], "--device", "[range: 0 to 2147483647]"),
    (["--max-evals", "0"], "--max-evals", COUNT_RANGE),
    (["--target", "100"], "--target", "[range: 0 to below 100]"),
    (["--target", "nan"], "--target", "[range: 0 to below 100]"),
    (["--timeout", "0"], "--timeout", "[range: above 0 to 24h]"),
    (["--timeout", "25h"], "--timeout", "[range: above 0 to 24h]"),  # epoll: < 24.8 days
    (["--sample-time", "2h"], "--sample-time", "[range: above 0 to 1h]"),
    (["--max-samples", "0"], "--max-samples", "[range: 10 to 2147483647]"),
])
def test_tune_refuses_a_number_out_of_range_in_one_line(args, option, range_text, capsys,
                                                        tmp_path, synthetic_db):
    db = tmp_path / "r.db"
    code, err = run_cli(capsys, "tune", "--replay", synthetic_db, "--db", db, "--quiet",
                        "--sizes", "2^10", "--max-evals", "3", *args)
    line = error_line(err)
    assert code == 2 and f"argument {option}:" in line and range_text in line, err
    assert not db.exists()


@pytest.mark.parametrize("size, message", [
    ("18446744073709551616", "is too large (the largest size is 2^40 = 1099511627776)"),
    ("1099511627777", "is too large (the largest size is 2^40 = 1099511627776)"),
    ("2^41", "is too large (the largest size is 2^40 = 1099511627776)"),
    ("9" * 5000, "is too large (the largest size is 2^40"),
    ("1..100000000000", "holds 100000000000 sizes; a run takes at most 1000"),
])
def test_sizes_have_one_limit_however_written(size, message, capsys, tmp_path, synthetic_db):
    db = tmp_path / "r.db"
    code, err = run_cli(capsys, "tune", "--replay", synthetic_db, "--db", db, "--quiet",
                        "--max-evals", "3", "--sizes", size)
    line = error_line(err)
    assert code == 2 and line.startswith("reducetune: error: size") and message in line, err
    assert len(line) < 300 and not db.exists()


def test_the_largest_size_is_accepted_in_either_spelling():
    from reducetune._sizes import parse_sizes

    assert parse_sizes("2^40") == parse_sizes("1099511627776") == [1 << 40]
    with pytest.raises(errors.InvalidConfiguration, match="at most 1000"):
        parse_sizes(["1..600", "1000..1500"])  # the run's total counts too


def test_best_refuses_a_size_beyond_the_limit(capsys, tmp_path):
    code, err = run_cli(capsys, "best", "--n", "1099511627777", "--db", tmp_path / "none.db")
    assert code == 2 and "2^40" in error_line(err)


def test_replay_refuses_a_negative_device_also_through_the_api(synthetic_db):
    from reducetune.evaluate.replay import ReplayEvaluator

    with pytest.raises(errors.DeviceError, match="--device -1 is not one of them"):
        ReplayEvaluator(synthetic_db, -1)


@pytest.mark.parametrize("args, option, range_text", [
    (["--sample", "-1"], "--sample", "[range: 0 to 2147483647]"),
    (["--threads", "-1"], "--threads", "[range: 0 to 1024]"),
    (["--threads", "100000"], "--threads", "[range: 0 to 1024]"),
])
def test_compile_refuses_a_number_out_of_range(args, option, range_text, capsys):
    code, err = run_cli(capsys, "compile", "--family", "tunable", "--dtype", "float32",
                        "--op", "sum", *args)
    line = error_line(err)
    assert code == 2 and f"argument {option}:" in line and range_text in line, err


@pytest.mark.parametrize("args, option, range_text", [
    (["--max-evals", "0"], "--max-evals", COUNT_RANGE),  # was: silently the default budget
    (["--seeds", "0"], "--seeds", "[range: 1 to 10000]"),
    (["--jobs", "2000"], "--jobs", "[range: 1 to 1024]"),  # below 1: run()'s own message
])
def test_search_efficiency_refuses_a_number_out_of_range(args, option, range_text, capsys,
                                                         tmp_path, synthetic_db):
    out = tmp_path / "se"
    code, err = run_cli(capsys, "experiment", "search-efficiency", "--replay", synthetic_db,
                        "--n", "2^10", "--strategies", "random", "--seeds", "1", "--out", out,
                        *args)
    line = error_line(err)
    assert code == 2 and f"argument {option}:" in line and range_text in line, err
    assert not out.exists()


def test_search_efficiency_api_refuses_a_zero_budget(tmp_path, synthetic_db):
    from reducetune.experiments.search_efficiency import run

    with pytest.raises(errors.InvalidConfiguration, match="--max-evals must be at least 1"):
        run(synthetic_db, "float32", "sum", [1024], "tunable", ["random"], 1, 0,
            tmp_path / "se")


def test_the_factories_check_both_ends_and_say_the_range():
    from reducetune.cli.args import duration, integer, real

    assert integer(0, 5)("5") == 5 and real(0, 1, lo_open=True)("1") == 1.0
    assert duration(0, 3600, lo_open=True)("100ms") == pytest.approx(0.1)
    for parse, text, rule in [(integer(0, 5), "6", "'6' must be at most 5 [range: 0 to 5]"),
                              (integer(0, 5), "x", "'x' is not an integer [range: 0 to 5]"),
                              (real(0, 1, lo_open=True), "0", "'0' must be above 0"),
                              (real(0, 1), "inf", "'inf' must be at most 1"),
                              (duration(1, 60), "2m", "'2m' must be at most 1m")]:
        with pytest.raises(argparse.ArgumentTypeError, match=rule.replace("[", r"\[")):
            parse(text)


def _parsers(parser: argparse.ArgumentParser, name: str = "reducetune"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_numeric_option_shows_its_range_in_its_help():
    numeric = 0
    for name, parser in _parsers(build_parser()):
        shown = " ".join(parser.format_help().split())
        for action in parser._actions:
            # a number: any converting type (int, float, a factory), or a size option; not
            # a type that args.py marks as reading text (names, a folder, a namespace)
            reads_text = getattr(action.type, "reads_text", False)
            if (action.type in (None, str, Path) or reads_text) \
                    and action.dest not in ("n", "sizes"):
                continue
            numeric += 1
            flag = action.option_strings[-1] if action.option_strings else action.dest
            assert action.type not in (int, float), f"{name} {flag}: a bare {action.type}"
            text = getattr(action.type, "range_text", None)
            assert text, f"{name} {flag}: not read by a ranged type of commands/_args.py"
            assert f"[range: {text}]" in " ".join((action.help or "").split()), (name, flag)
            assert f"[range: {text}]" in shown, (name, flag)
    assert numeric >= 15  # tune's nine, compile's two, search-efficiency's, query's, ...


def _has_gpu() -> bool:
    try:
        _core.query_device(0)
    except errors.DeviceError:
        return False
    return True


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU")
@pytest.mark.parametrize("more", [[], ["--in-process"]])
def test_tune_without_a_gpu_says_so_and_leaves_no_results_file(more, tmp_path):
    db = tmp_path / "r.db"
    proc = subprocess.run([sys.executable, "-m", "reducetune", "tune", "--db", str(db),
                           "--quiet", "--sizes", "2^10", *more],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONUNBUFFERED="1"))
    line = error_line(proc.stderr)
    assert proc.returncode == 1, proc.stderr
    assert "no NVIDIA driver / GPU found" in line and "--replay DB" in line
    assert "machine with an NVIDIA GPU" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no r.db, -wal, -shm, .lock


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU")
def test_devices_without_a_gpu_says_so(tmp_path, capsys):
    code = main(["devices", "--db", str(tmp_path / "none.db")])
    out = capsys.readouterr().out
    assert code == 1 and "no NVIDIA driver / GPU found" in out and "--replay DB" in out


@pytest.mark.parametrize("args", [["--restrict", "block_size=300"], ["--base", "nosuch"]])
def test_a_tune_that_fails_before_recording_leaves_no_results_file(args, capsys, tmp_path,
                                                                   synthetic_db):
    db = tmp_path / "r.db"
    code, err = run_cli(capsys, "tune", "--replay", synthetic_db, "--db", db, "--quiet",
                        "--sizes", "2^10", *args)
    assert code == 2 and error_line(err).startswith("reducetune: error:")
    assert not db.exists() and not Path(f"{db}-wal").exists()


def test_a_failed_tune_keeps_a_results_file_it_did_not_create(capsys, tmp_path, synthetic_db):
    from reducetune.store.results import open_store

    db = tmp_path / "r.db"
    open_store(db).close()
    before = db.read_bytes()
    code, err = run_cli(capsys, "tune", "--replay", synthetic_db, "--db", db, "--quiet",
                        "--sizes", "2^10", "--restrict", "block_size=300")
    assert code == 2 and db.exists() and len(db.read_bytes()) >= len(before) > 0
