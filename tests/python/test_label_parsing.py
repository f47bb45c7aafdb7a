"""Labels (``tunable.float32.sum.bs_256...``, ``ept_16.cap_0``) are written and read back only
where points are stored or shown (issue 23, item 1): a point crosses layers and the C++/Python
boundary as a typed value (``point``, ``_core.Point``), so code that already holds one never
parses its label again. This test scans the code for calls that read a label back and allows
them only in the files listed below, each with its reason; a new call anywhere else fails,
naming the file and the line. A listed file that no longer reads a label fails too, so the
list only shrinks. Runs without the extension or a GPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# C++ (tuner/, db/, driver/src): the space's label readers, the store's reading of a stored
# row, a space's parse, and splitting a label by hand.
CPP_CALLS = [
    re.compile(r"\b(parse_variant_label|parse_launch_label|parse_point|stored_point)\s*\("),
    re.compile(r"(?:\.|->)\s*parse\s*\("),  # search_space::parse (json's is json::parse)
    re.compile(r"\w*label\w*\s*\.\s*(?:find|rfind|substr)\s*\("),
    re.compile(r"\bsplit\s*\(\s*\w*label\w*\s*,"),
]

# Python (driver/reducetune): a parse given a label, the removed parse_labels, and labels
# split by hand (on "." or a label prefix such as ".bs_" or "ept_").
PY_CALLS = [
    re.compile(r"\.parse\s*\([^)\n]*label"),
    re.compile(r"\bparse_labels\s*\("),
    re.compile(r"(?:label|variant|launch)\w*(?:\[[^\]]*\])?\s*\.\s*(?:split|partition|rsplit)"
               r"\s*\(\s*[\"']\."),
    re.compile(r"\.split\s*\(\s*[\"']\.?(?:bs|ept|cap|u|v|warp|blk|fin)_"),
]

# Where a label may be read, and why. C++ by path from the repository root; Python by file
# name under driver/reducetune (its modules are moving into subpackages).
ALLOWED_CPP = {
    "tuner/reducetune/space/variant.cpp": "the label format itself: to_label and its inverse",
    "tuner/reducetune/space/point.cpp": "parse_point, the inverse of a point's two labels",
    "tuner/reducetune/space/space_points.cpp": "search_space::parse (labels of this space)",
    "db/reducetune/db/point_records.cpp":
        "the store: stored_point reads a stored row's labels once; the schema-4 repair",
    "db/reducetune/db/launch_rule.cpp":
        "a Catalog entry is a stored row: read once (stored_point), then the typed rule",
    "db/reducetune/db/axis_picks.cpp":
        "an axis Catalog entry is a stored row: read once (stored_point), then the typed rule",
    "tuner/reducetune/runtime/reducer_device.cpp":
        "a dispatch table's rule is a stored row (Catalog or exported JSON): stored_point",
    "tuner/reducetune/runtime/reducer_axis.cpp":
        "an axis table's entry is a stored row (the caller's or exported JSON): stored_point",
    "driver/src/bind_point.cpp": "Space.parse: Python's one door to the space's reader",
}
ALLOWED_PY = {
    "study_share.py": "the store subpackage: a shared study's stored trial attributes",
    "priors.py": "the store subpackage: the priors table's stored labels (Prior.point)",
    "candidates.py": "the store subpackage: the application ranking's stored rows as Points",
}


def _code_lines(path: Path, comment: str):
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        code = line.split(comment, 1)[0] if comment == "#" else re.sub(r"//.*", "", line)
        if code.strip():
            yield number, code


def label_reads(path: Path) -> list[tuple[int, str]]:
    """(line number, line) of every call in `path` that reads a label back."""
    cpp = path.suffix in (".cpp", ".hpp", ".cu", ".cuh")
    patterns = CPP_CALLS if cpp else PY_CALLS
    # a declaration or definition of a reader (its parameters: "const std::string &label")
    # is no call
    return [(n, code.strip()) for n, code in _code_lines(path, "//" if cpp else "#")
            if any(p.search(code) for p in patterns) and not (cpp and "std::string &" in code)]


def _cpp_files():
    for root in ("tuner", "db", "driver/src"):
        for path in sorted((REPO / root).rglob("*")):
            if path.suffix in (".cpp", ".hpp", ".cu", ".cuh") and "build" not in path.parts:
                yield path.relative_to(REPO).as_posix(), path


def _py_files():
    for path in sorted((REPO / "driver" / "reducetune").rglob("*.py")):
        yield path.name, path


def _reads_outside(files, allowed) -> list[str]:
    return [f"{path.relative_to(REPO)}:{n}: {code}"
            for key, path in files for n, code in label_reads(path) if key not in allowed]


def test_only_the_store_the_exports_and_the_listed_files_read_labels():
    found = _reads_outside(_cpp_files(), ALLOWED_CPP) + _reads_outside(_py_files(), ALLOWED_PY)
    assert not found, ("a label is read back outside the store and the exports (pass the "
                       "typed point instead, or read the stored row in the store):\n"
                       + "\n".join(found))


def test_every_listed_file_still_reads_a_label():
    """A file that stopped reading labels (or moved) leaves the list: it only shrinks."""
    cpp = {key for key, path in _cpp_files() if label_reads(path)}
    py = {key for key, path in _py_files() if label_reads(path)}
    stale = sorted(set(ALLOWED_CPP) - cpp) + sorted(set(ALLOWED_PY) - py)
    assert not stale, f"listed but reading no label (remove from the list): {stale}"


@pytest.mark.parametrize("line", [
    'const auto c = rt::parse_launch_label(f, launch_label);',
    'p = s->parse(rule->variant, rule->launch);',
    'const point p = space.parse(e.variant.label, e.launch_label);',
    'family_named(variant_label.substr(0, variant_label.find(\'.\')));',
    'auto parts = split(label, \'.\');',
])
def test_a_new_cpp_call_outside_the_list_fails(tmp_path, line):
    path = tmp_path / "tuner" / "reducetune" / "runtime" / "new.cpp"
    path.parent.mkdir(parents=True)
    path.write_text(f"void f() {{\n  {line}\n}}\n// p = s->parse(a, b); in a comment is none\n")
    assert label_reads(path) == [(2, line)]


@pytest.mark.parametrize("line", [
    'p = space.parse(b["variant_label"], b["launch_label"])',
    'ept = int(launch.split(".")[0].split("_")[1])',
    'bs = int(r["variant"].split(".bs_")[1].split(".")[0])',
    'd = _core.parse_labels(v, l)',
])
def test_a_new_python_call_outside_the_list_fails(tmp_path, line):
    path = tmp_path / "new_module.py"
    path.write_text(f"def f(b, r, v, l, launch, space):\n    {line}\n"
                    "    args = parser.parse_args()  # argparse is no label\n")
    assert label_reads(path) == [(2, line)]
