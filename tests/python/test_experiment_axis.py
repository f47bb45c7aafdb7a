"""The axis experiment (``reducetune experiment axis``), without a GPU, from the axis
benchmark's JSONs of 2026-11-26 as committed under docs/results (64 shapes each: totals 2^28
and 2^24, float32 and bfloat16, rows and columns, r = 2..2^22): the H100's, run with
--transfer of an earlier H200 run's file, and the H200's, run with --transfer of that H100
file. Every expected number is computed here from the files' own fields (the candidates'
medians, the batch_invariant flags, the transfer entries)."""

from __future__ import annotations

import json
import lzma
import math
from pathlib import Path

import pytest

from reducetune._space import Space, limits_for_arch
from reducetune.experiments import axis
from reducetune.experiments._axis_analysis import analyse, load

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "docs" / "results"
H100 = RESULTS / "h100_2026-11-26_axis_bench" / "axis.json.xz"
H200 = RESULTS / "h200_2026-11-26_axis_bench" / "axis.json.xz"


def _raw(path: Path) -> dict:
    """A benchmark JSON as the experiment reads it: the committed ones are xz-compressed."""
    raw = path.read_bytes()
    return json.loads(lzma.decompress(raw) if path.suffix == ".xz" else raw)


def _moved(c: dict) -> bool:
    """The other GPU's point, timed beside the run's own candidates (named "transfer ...",
    "transfer transfer ..." in the H200's file where the H100's best was itself moved)."""
    return c["name"].startswith("transfer ")


def _own(row: dict) -> list[dict]:
    """The row's own candidates that reached the rounds (a median)."""
    return [c for c in row["tune"]["candidates"] if "median_s" in c and not _moved(c)]


def _fastest(cands: list[dict]) -> dict:
    return min(cands, key=lambda c: c["median_s"])


def _strategy(dtype: str, variant: str, launch: str) -> str:
    space = Space("axis", dtype, "sum", limits_for_arch("90"))
    return str(space.parse(variant, launch).params["strategy"])


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _without_transfers(path: Path, tmp_path: Path) -> Path:
    """A copy of a file as a run without --transfer writes it: no transfer entries, no
    transferred candidate, each row's recorded best its own fastest."""
    raw = _raw(path)
    for row in raw["rows"]:
        row["tune"]["candidates"] = [c for c in row["tune"]["candidates"] if not _moved(c)]
        row["point"] = {k: _fastest(_own(row))[k] for k in ("name", "variant", "launch")}
        row["transfer"] = None
    out = tmp_path / f"{path.parent.name}_without_transfers.json"
    out.write_text(json.dumps(raw))
    return out


def test_the_winner_per_shape_is_the_fastest_of_the_runs_own_candidates():
    """Not the transferred point, even where it won the run's rounds (the recorded best of 15
    of the H100's 64 rows): the heatmap shows what each GPU's own tune found."""
    raw = _raw(H100)
    shapes = analyse(load(H100))["shapes"]
    assert len(shapes) == len(raw["rows"]) == 64
    moved_won = 0
    for row, s in zip(raw["rows"], shapes):
        best = _fastest(_own(row))
        assert (s["best"]["name"], s["best"]["median_s"]) == (best["name"], best["median_s"])
        assert s["best"]["strategy"] == _strategy(row["dtype"], best["variant"], best["launch"])
        assert (s["dtype"], s["kind"], s["r"], s["outer_inner"], s["total"]) == (
            row["dtype"], row["kind"], row["view"][1], row["view"][0] * row["view"][2],
            row["total"])
        moved_won += _moved(row["point"])
    assert moved_won > 0  # the data hold rows where the transferred point won the rounds
    # float32 rows of 2^28: a short-row strategy at r = 2, split rows at r = 2^22
    rows = [s["best"]["strategy"] for s in shapes
            if (s["dtype"], s["total"], s["kind"]) == ("float32", 1 << 28, "rows")]
    assert rows[0] == "staged" and rows[-1] == "split" and len(set(rows)) >= 4


def test_percent_of_peak_counts_bytes_read_and_written():
    raw = _raw(H100)
    for row, s in zip(raw["rows"], analyse(load(H100))["shapes"]):
        outer, r, inner = row["view"]
        moved = row["itemsize"] * (outer * r * inner + outer * inner)
        best_s = _fastest(_own(row))["median_s"]
        assert s["pct_peak"] == pytest.approx(100 * moved / best_s / row["peak"])
        assert 0 < s["pct_peak"] < 100


@pytest.mark.parametrize("path", [H100, H200], ids=["h100", "h200"])
def test_the_determinism_cost_per_shape_is_the_fastest_batch_invariant_candidate(path):
    raw = _raw(path)
    costs = {"rows": [], "columns": []}
    for row, s in zip(raw["rows"], analyse(load(path))["shapes"]):
        best = _fastest(_own(row))
        bi = _fastest([c for c in _own(row) if c["batch_invariant"]])
        assert s["best_batch_invariant"]["name"] == bi["name"]
        assert s["bi_cost_pct"] == pytest.approx(100 * (bi["median_s"] / best["median_s"] - 1))
        costs[row["kind"]].append(s["bi_cost_pct"])
    # free for every column shape (the fastest column points are batch_invariant), not for
    # every row shape
    assert max(costs["columns"]) == 0 and min(costs["rows"]) == 0 and max(costs["rows"]) > 5


def _direction(report: dict, to: str) -> dict:
    (d,) = [d for d in report["transfers"] if d["to"] == to]
    return d


def test_recorded_transfers_give_the_runs_ratios_and_their_geometric_mean(cli, tmp_path):
    out = tmp_path / "axis"
    code, _, err = cli("experiment", "axis", "--inputs", H100, H200, "--out", out)
    assert code == 0, err
    report = json.loads((out / "axis_experiment.json").read_text())
    md = (out / "axis_experiment.md").read_text()
    assert len(report["transfers"]) == 2
    for here, there in ((H100, H200), (H200, H100)):
        raw = _raw(here)
        d = _direction(report, raw["device"]["name"])
        assert d["from"] == _raw(there)["device"]["name"]
        ratios = [row["transfer"]["ratio_to_best"] for row in raw["rows"]]
        assert [t["ratio"] for t in d["shapes"]] == pytest.approx(ratios)
        assert all("--transfer" in t["source"] for t in d["shapes"])
        assert d["geomean"] == pytest.approx(_geomean(ratios))
        assert f"Geometric mean {_geomean(ratios):.3f} over 64 shape(s)" in md
        assert min(ratios) < 1 < max(ratios)  # the other's point beat the tune somewhere


def test_a_ratio_the_run_did_not_record_is_the_transfers_median_over_the_own_best(tmp_path):
    raw = _raw(H100)
    for row in raw["rows"]:
        del row["transfer"]["ratio_to_best"]
    path = tmp_path / "h100_median_only.json"
    path.write_text(json.dumps(raw))
    d = axis.run([path], tmp_path / "axis")["transfers"][0]
    want = [row["transfer"]["median_s"] / _fastest(_own(row))["median_s"]
            for row in raw["rows"]]
    assert [t["ratio"] for t in d["shapes"]] == pytest.approx(want)
    # the run's own ratio is the same quotient: its best is its own fastest candidate
    assert want == pytest.approx([r["transfer"]["ratio_to_best"] for r in _raw(H100)["rows"]])


def test_a_doubled_transfer_prefix_is_read_as_the_transferred_point(tmp_path):
    """The H200's run named the H100's moved points "transfer transfer ..." (the H100's best
    was itself the H200 point it had been given): such a candidate is still the transfer's,
    never the H200's own winner, and the transfer table names the point once, unprefixed."""
    raw = _raw(H200)
    doubled = [i for i, row in enumerate(raw["rows"]) if any(
        c["name"].startswith("transfer transfer ") for c in row["tune"]["candidates"])]
    assert len(doubled) == 15  # as docs/research/README.md says
    report = axis.run([H200], tmp_path / "axis")
    shapes = report["gpus"][0]["shapes"]
    (d,) = report["transfers"]
    for i in doubled:
        row = raw["rows"][i]
        assert not _moved(shapes[i]["best"]) and not _moved(shapes[i]["best_batch_invariant"])
        assert shapes[i]["best"]["name"] == _fastest(_own(row))["name"]
        assert d["shapes"][i]["point"] == row["transfer"]["point"]["name"][len("transfer "):]
    assert not any(t["point"].startswith("transfer") for t in d["shapes"])
    assert "transfer transfer" not in (tmp_path / "axis" / "axis_experiment.md").read_text(
        ).replace(raw["command"], "")


def test_the_report_says_which_transferred_points_are_the_other_files_bests(tmp_path):
    """The H100's run was given an earlier H200 run's file: at some shapes its point is not
    the best the H200 file here records. The H200's run was given the H100 file here."""
    report = axis.run([H100, H200], tmp_path / "axis")
    h100, h200 = _raw(H100), _raw(H200)
    same = sum((r["transfer"]["point"]["variant"], r["transfer"]["point"]["launch"])
               == (o["point"]["variant"], o["point"]["launch"])
               for r, o in zip(h100["rows"], h200["rows"]))
    assert 0 < same < 64
    d = _direction(report, h100["device"]["name"])
    assert (d["files_best"], d["not_files_best"]) == (same, 64 - same)
    assert (_direction(report, h200["device"]["name"])["files_best"],
            _direction(report, h200["device"]["name"])["not_files_best"]) == (64, 0)
    md = (tmp_path / "axis" / "axis_experiment.md").read_text()
    assert f"recorded best at {same} of 64 shapes, another point at {64 - same}" in md


def test_the_moved_points_twin_among_the_own_candidates_gives_the_rounds_noise(tmp_path):
    """Where the moved point is also one of the run's own candidates (the same variant and
    launch under its own name), the report gives that candidate's ratio to the own best and
    how far the two medians of one point fall apart."""
    raw = _raw(H100)
    report = axis.run([H100], tmp_path / "axis")
    pairs = []
    for row in raw["rows"]:
        t = row["transfer"]
        twin = [c for c in _own(row) if (c["variant"], c["launch"]) ==
                (t["point"]["variant"], t["point"]["launch"])]
        if twin:
            best = _fastest(_own(row))["median_s"]
            pairs.append((t["median_s"] / best, twin[0]["median_s"] / best))
    assert len(pairs) > 32
    (d,) = report["transfers"]
    assert [x for pair in d["twins"] for x in pair] == pytest.approx(
        [x for pair in pairs for x in pair])
    apart = [max(r / t, t / r) for r, t in pairs]
    assert max(apart) > 1.1  # the same point, 10 % apart in one run's rounds somewhere
    md = (tmp_path / "axis" / "axis_experiment.md").read_text()
    assert (f"differ by a factor {_geomean(apart):.3f} in the geometric mean, at most "
            f"{max(apart):.3f}") in md


def test_a_transferred_point_that_failed_verification_has_no_ratio(tmp_path):
    raw = _raw(H100)
    raw["rows"][1]["transfer"].update(verified=False, median_s=None, ratio_to_best=None)
    path = tmp_path / "h100_failed.json"
    path.write_text(json.dumps(raw))
    (d,) = axis.run([path], tmp_path / "axis")["transfers"]
    assert d["shapes"][1]["ratio"] is None and "verification" in d["shapes"][1]["source"]
    kept = [r["transfer"]["ratio_to_best"] for i, r in enumerate(raw["rows"]) if i != 1]
    assert d["geomean"] == pytest.approx(_geomean(kept))


def test_a_best_found_among_the_other_gpus_candidates_transfers(cli, tmp_path):
    """Without --transfer entries: the H200's best at a shape that the H100's run measured
    among its own candidates, over the H100's best."""
    h100, h200 = (_without_transfers(p, tmp_path) for p in (H100, H200))
    out = tmp_path / "axis"
    code, _, err = cli("experiment", "axis", "--inputs", h100, h200, "--out", out)
    assert code == 0, err
    report = json.loads((out / "axis_experiment.json").read_text())
    want = {}
    for here, theirs in zip(_raw(h100)["rows"], _raw(h200)["rows"]):
        same = [c for c in _own(here) if (c["variant"], c["launch"]) ==
                (theirs["point"]["variant"], theirs["point"]["launch"])]
        if same:
            key = (here["dtype"], here["kind"], here["r"], here["total"] // here["r"])
            want[key] = same[0]["median_s"] / _fastest(_own(here))["median_s"]
    assert len(want) > 10  # most H200 bests are among the H100's candidates
    d = _direction(report, _raw(H100)["device"]["name"])
    assert all(t["source"] == "among this GPU's candidates" for t in d["shapes"])
    got = {(t["dtype"], t["kind"], t["r"], t["outer_inner"]): t["ratio"] for t in d["shapes"]}
    assert got == pytest.approx(want)


def test_the_report_names_its_inputs_and_writes_a_heatmap_per_gpu_and_type(cli, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "axis"
    code, _, err = cli("experiment", "axis", "--replay", H100, "--replay", H200, "--out", out)
    assert code == 0, err
    pngs = [f"heatmap_{gpu}_{dtype}.png" for gpu in ("nvidia_h100_80gb_hbm3", "nvidia_h200")
            for dtype in ("float32", "bfloat16")] + ["determinism_cost.png"]
    assert sorted(p.name for p in out.glob("*.png")) == sorted(pngs)
    assert all((out / p).stat().st_size > 0 for p in pngs)
    md = (out / "axis_experiment.md").read_text()
    for raw in (_raw(H100), _raw(H200)):
        assert raw["device"]["name"] in md and raw["date"] in md and raw["command"] in md
    assert all(f"]({p})" in md for p in pngs)
    written = json.loads((out / "axis_experiment.json").read_text())
    assert f"- Command: `{written['command']}`" in md  # the command line that built it
    # the candidates stay in the inputs it names, not in the report's JSON
    assert all("candidates" not in s for g in written["gpus"] for s in g["shapes"])


def test_replay_and_inputs_build_the_same_report(cli, tmp_path):
    reports = []
    for form in (["--inputs", H100, H200], ["--replay", H100, "--replay", H200]):
        out = tmp_path / form[0].strip("-")
        code, _, err = cli("experiment", "axis", *form, "--out", out)
        assert code == 0, err
        reports.append({k: v for k, v in json.loads(
            (out / "axis_experiment.json").read_text()).items() if k != "command"})
    assert reports[0] == reports[1]


@pytest.mark.parametrize("content, why", [
    ('{"rows": [], "samples": 3}', "it names no device"),
    ('{"device": {"name": "x"}, "sizes": {}}', "it has no 'rows' list"),
    ('{"device": {"name": "x"}, "rows": [{"n": 1024}]}', "row 0 is no shape"),
    ("[1, 2]", "its top level is not an object"),
    ("SQLite format 3", "it is not JSON"),
])
def test_a_file_that_is_no_axis_benchmark_json_is_refused_in_one_line(cli, tmp_path, content,
                                                                       why):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "axis"
    code, _, err = cli("experiment", "axis", "--inputs", H100, bad, "--out", out)
    assert code == 2 and "Traceback" not in err
    assert f"{bad} is not an axis benchmark JSON" in err and why in err, err
    assert not out.exists()  # refused before anything is written


def test_a_file_named_xz_that_is_not_xz_compressed_is_refused_in_one_line(cli, tmp_path):
    bad = tmp_path / "axis.json.xz"
    bad.write_text("{}")  # plain JSON under a compressed name
    code, _, err = cli("experiment", "axis", "--inputs", H100, bad, "--out", tmp_path / "axis")
    assert code == 2 and "Traceback" not in err
    assert f"{bad} is not an axis benchmark JSON" in err and "not xz-compressed" in err, err


@pytest.mark.parametrize("args, message", [
    ([], "name the axis benchmark's JSON of each GPU"),
    (["--inputs", H100, "--replay", H100], "is named twice"),
    (["--inputs", "/nonexistent/axis.json"], "does not exist"),
])
def test_missing_or_repeated_inputs_are_refused(cli, tmp_path, args, message):
    code, _, err = cli("experiment", "axis", *args, "--out", tmp_path / "axis")
    assert code == 2 and message in err, err


def test_the_committed_report_is_the_one_the_committed_inputs_rebuild(tmp_path, monkeypatch):
    """docs/research/axis/ is what --replay of the two committed JSONs writes (all but the
    first bullet: the command line and the day it was built): regenerate it when an input or
    the report changes (its command is that bullet)."""
    committed = REPO / "docs" / "research" / "axis" / "axis_experiment.md"
    inputs = [p.relative_to(REPO) for p in (H100, H200)]
    monkeypatch.chdir(REPO)  # the report names its inputs as given: relative to the repository
    axis.run(inputs, tmp_path / "axis")
    rebuilt = (tmp_path / "axis" / "axis_experiment.md").read_text().splitlines()
    kept = committed.read_text().splitlines()
    assert kept[2].startswith("- Command: `reducetune experiment axis ")
    assert kept[:2] + kept[3:] == rebuilt[:2] + rebuilt[3:]


def test_a_row_without_candidates_reports_what_it_recorded_and_a_bare_shape_as_not_measured(
        tmp_path):
    """Rows as older or trimmed files hold them: no candidates (the recorded best and best
    batch_invariant times stand), no variant (no strategy), or no tune at all."""
    best, bi = 2.0e-3, 2.1e-3
    path = tmp_path / "bare.json"
    path.write_text(json.dumps({"device": {"name": "Test GPU", "peak_bytes_per_s": 4e12},
                                "rows": [
        {"kind": "rows", "view": [1 << 23, 2, 1], "point": {"name": "warp_rows"},
         "tune": {"best_s": best, "best_batch_invariant": "thread_columns",
                  "best_batch_invariant_s": bi}},
        {"kind": "columns", "view": [1, 16, 1 << 20]}]}))
    report = axis.run([path], tmp_path / "axis")
    measured, bare = report["gpus"][0]["shapes"]
    assert measured["best"]["name"] == "warp_rows" and measured["best"]["strategy"] is None
    assert measured["best_batch_invariant"]["name"] == "thread_columns"
    assert measured["bi_cost_pct"] == pytest.approx(100 * (bi / best - 1))
    assert bare["best"] is None and bare["bi_cost_pct"] is None and bare["pct_peak"] is None
    assert "| columns | 2^4 | 2^20 | – | not measured |" in (
        tmp_path / "axis" / "axis_experiment.md").read_text()
