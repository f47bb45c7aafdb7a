"""The axis experiment (``reducetune experiment axis``), without a GPU, from real axis
benchmark JSONs: the H100's (tests/data/recorded/experiments/h100_2026-11-26_axis_bench.json,
python -m reducetune.benchmarks.axis on 2026-11-26, 9 float32 shapes at 2^28) and the H200's
committed first look (docs/results/h200_2026-11-26_axis_first_look/axis.json, an older file
whose rows name no dtype). Every expected number is computed here from the files' own fields
(the benchmark's recorded best, best batch_invariant point and candidates' medians)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from reducetune._space import Space, limits_for_arch
from reducetune.experiments import axis
from reducetune.experiments._axis_analysis import analyse, load

REPO = Path(__file__).resolve().parents[2]
H100 = REPO / "tests" / "data" / "recorded" / "experiments" / "h100_2026-11-26_axis_bench.json"
H200 = REPO / "docs" / "results" / "h200_2026-11-26_axis_first_look" / "axis.json"


def _raw(path: Path) -> dict:
    return json.loads(path.read_text())


def _medians(row: dict) -> dict[str, float]:
    return {c["name"]: c["median_s"] for c in row["tune"]["candidates"]}


def _preset_strategies() -> dict[str, str]:
    """Preset name -> its strategy, from the family's presets (not from a label): the
    benchmark's candidates are named '<preset>' or '<preset> <param>=<value>', and its
    neighbours step block_size, unroll, vec, split or lanes, never the strategy."""
    space = Space("axis", "float32", "sum", limits_for_arch("90"))
    return {p.name: str(p.params["strategy"]) for p in space.presets()}


def test_the_winner_per_shape_is_the_benchmarks_best_with_its_presets_strategy():
    raw = _raw(H100)
    shapes = analyse(load(H100))["shapes"]
    presets = _preset_strategies()
    assert len(shapes) == len(raw["rows"]) == 9
    for row, s in zip(raw["rows"], shapes):
        assert s["best"]["name"] == row["point"]["name"]
        assert s["best"]["median_s"] == row["tune"]["best_s"]
        assert s["best"]["strategy"] == presets[row["point"]["name"].split(" ")[0]]
        assert (s["kind"], s["r"], s["outer_inner"]) == (
            row["kind"], row["view"][1], row["view"][0] * row["view"][2])
    # the H100's rows move from a thread per short row to split rows as r grows
    rows = [s["best"]["strategy"] for s in shapes if s["kind"] == "rows"]
    assert rows[0] == "staged" and rows[-1] == "split" and len(set(rows)) >= 4


def test_percent_of_peak_counts_bytes_read_and_written():
    raw = _raw(H100)
    for row, s in zip(raw["rows"], analyse(load(H100))["shapes"]):
        outer, r, inner = row["view"]
        moved = row["itemsize"] * (outer * r * inner + outer * inner)
        assert s["pct_peak"] == pytest.approx(100 * moved / row["tune"]["best_s"] / row["peak"])
        assert 0 < s["pct_peak"] < 100


def test_the_determinism_cost_per_shape_is_the_recorded_one():
    raw = _raw(H100)
    costs = []
    for row, s in zip(raw["rows"], analyse(load(H100))["shapes"]):
        t = row["tune"]
        assert s["best_batch_invariant"]["name"] == t["best_batch_invariant"]
        want = 100 * (t["best_batch_invariant_s"] / t["best_s"] - 1)
        assert s["bi_cost_pct"] == pytest.approx(want, abs=1e-9)
        costs.append(s["bi_cost_pct"])
    assert min(costs) == 0 and max(costs) > 1  # free at some shapes, not at all


def _with_transfer(tmp_path: Path, keep_ratio: bool = True) -> tuple[Path, list[float]]:
    """A copy of the H100 file as a --transfer run writes it: each row's 'other GPU's best'
    (here this GPU's second-best candidate) timed beside its candidates under the name
    "transfer <name>", with its median and its ratio to this run's own best. In the first
    row it is made faster than that best (a transferred point may beat the tune): the
    winner is still this GPU's own best."""
    raw = _raw(H100)
    ratios = []
    for i, row in enumerate(raw["rows"]):
        ranked = sorted(row["tune"]["candidates"], key=lambda c: c["median_s"])
        second, best = ranked[1], ranked[0]
        median = 0.9 * best["median_s"] if i == 0 else second["median_s"]
        point = {k: second[k] for k in ("name", "variant", "launch")}
        row["tune"]["candidates"].append({**point, "name": f"transfer {second['name']}",
                                          "batch_invariant": True, "median_s": median})
        row["transfer"] = {"from_device": "NVIDIA H200", "point": point, "verified": True,
                           "median_s": median}
        if keep_ratio:
            row["transfer"]["ratio_to_best"] = median / best["median_s"]
        ratios.append(median / best["median_s"])
    path = tmp_path / "h100_with_transfer.json"
    path.write_text(json.dumps(raw))
    return path, ratios


@pytest.mark.parametrize("keep_ratio", [True, False], ids=["ratio_to_best", "median_only"])
def test_recorded_transfers_give_their_ratios_and_geometric_mean(cli, tmp_path, keep_ratio):
    path, ratios = _with_transfer(tmp_path, keep_ratio)
    out = tmp_path / "axis"
    code, _, err = cli("experiment", "axis", "--inputs", path, "--out", out)
    assert code == 0, err
    report = json.loads((out / "axis_experiment.json").read_text())
    (direction,) = report["transfers"]
    assert (direction["from"], direction["to"]) == ("NVIDIA H200", "NVIDIA H100 80GB HBM3")
    assert [t["ratio"] for t in direction["shapes"]] == pytest.approx(ratios)
    assert ratios[0] < 1 and all(r > 1 for r in ratios[1:])  # a second best is slower
    want = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    assert direction["geomean"] == pytest.approx(want)
    assert f"Geometric mean {want:.3f} over {len(ratios)} shape(s)" in (
        out / "axis_experiment.md").read_text()
    # the transferred point is not this GPU's winner, nor its batch_invariant best
    for row, s in zip(_raw(H100)["rows"], report["gpus"][0]["shapes"]):
        assert s["best"]["name"] == row["point"]["name"]
        assert s["best_batch_invariant"]["name"] == row["tune"]["best_batch_invariant"]


def test_a_recorded_transfer_stands_for_the_shape_in_place_of_the_candidates_lookup(tmp_path):
    """Given both GPUs' files, a shape whose run recorded the H200's point counts once in the
    H200 -> H100 direction, with the run's measurement, not also the candidates lookup."""
    path, ratios = _with_transfer(tmp_path)
    report = axis.run([path, H200], tmp_path / "axis")
    (direction,) = [d for d in report["transfers"] if d["to"] == "NVIDIA H100 80GB HBM3"]
    assert [t["r"] for t in direction["shapes"]] == [r["r"] for r in _raw(H100)["rows"]]
    assert all("--transfer" in t["source"] for t in direction["shapes"])
    assert [t["ratio"] for t in direction["shapes"]] == pytest.approx(ratios)


def test_a_transferred_point_that_failed_verification_has_no_ratio(cli, tmp_path):
    path, ratios = _with_transfer(tmp_path)
    raw = json.loads(path.read_text())
    raw["rows"][1]["transfer"] = {"from_device": "NVIDIA H200", "verified": False,
                                  "point": raw["rows"][1]["transfer"]["point"],
                                  "median_s": None, "ratio_to_best": None}
    path.write_text(json.dumps(raw))
    report = axis.run([path], tmp_path / "axis")
    (direction,) = report["transfers"]
    assert direction["shapes"][1]["ratio"] is None
    assert "verification" in direction["shapes"][1]["source"]
    kept = ratios[:1] + ratios[2:]
    assert direction["geomean"] == pytest.approx(
        math.exp(sum(math.log(x) for x in kept) / len(kept)))


def test_a_best_found_among_the_other_gpus_candidates_transfers(cli, tmp_path):
    """Without --transfer entries: the H200's best at a shape that the H100's run measured
    among its own candidates. The H200's file names no dtype per row: float32."""
    out = tmp_path / "axis"
    code, _, err = cli("experiment", "axis", "--inputs", H100, H200, "--out", out)
    assert code == 0, err
    report = json.loads((out / "axis_experiment.json").read_text())
    h100, h200 = _raw(H100), _raw(H200)
    want = {}
    for theirs in h200["rows"]:
        here = next(r for r in h100["rows"] if r["view"] == theirs["view"])
        medians = _medians(here)
        if theirs["point"]["name"] in medians:
            want[theirs["view"][1]] = medians[theirs["point"]["name"]] / min(medians.values())
    assert want  # the two files share at least one such shape
    (direction,) = [d for d in report["transfers"] if d["to"] == h100["device"]["name"]]
    assert direction["from"] == h200["device"]["name"]
    assert {t["r"]: t["ratio"] for t in direction["shapes"]} == pytest.approx(want)
    assert {s["dtype"] for s in report["gpus"][1]["shapes"]} == {"float32"}


def test_the_report_names_its_inputs_and_writes_a_heatmap_per_gpu_and_type(cli, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "axis"
    code, _, err = cli("experiment", "axis", "--replay", H100, "--replay", H200, "--out", out)
    assert code == 0, err
    pngs = ["heatmap_nvidia_h100_80gb_hbm3_float32.png", "heatmap_nvidia_h200_float32.png",
            "determinism_cost.png"]
    assert sorted(p.name for p in out.glob("*.png")) == sorted(pngs)
    assert all((out / p).stat().st_size > 0 for p in pngs)
    md = (out / "axis_experiment.md").read_text()
    for raw in (_raw(H100), _raw(H200)):
        assert raw["device"]["name"] in md and raw["date"] in md and raw["command"] in md
    assert all(f"]({p})" in md for p in pngs)
    command = json.loads((out / "axis_experiment.json").read_text())["command"]
    assert f"- Command: `{command}`" in md  # the command line that built it (sys.argv)


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
