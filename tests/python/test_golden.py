"""The answers of the committed databases are the same as before a refactor (issue 23): each
golden file under tests/data/golden/ (written by `scripts/golden --write`, from main as it
stood before the change, or anew for a stated change of answer) equals what this tree
answers: export json (default and widest selection) and export header of every committed
database after migration, and two replayed tunes of the H200 grid recording."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _golden_module():
    loader = importlib.machinery.SourceFileLoader("golden", str(REPO / "scripts" / "golden"))
    spec = importlib.util.spec_from_loader("golden", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


golden = _golden_module()
NAMES = sorted(p.name.removesuffix(".json.xz") for p in golden.GOLDEN.glob("*.json.xz"))


def test_every_committed_database_has_a_golden_file():
    expected = {p.name.removesuffix(".db.xz") for p in golden.committed()} | set(golden.REPLAYS)
    assert set(NAMES) == expected


def _first_difference(a, b, path="$"):
    """Where two JSON documents first differ, for a message a person can act on."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'golden' if k in a else 'this tree'}"
            if a[k] != b[k]:
                return _first_difference(a[k], b[k], f"{path}.{k}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_this_tree_answers_as_the_golden_file(name: str):
    with tempfile.TemporaryDirectory(prefix="reducetune-golden-") as tmp:
        now = golden.documents(Path(tmp), {name})[name]
    before = golden.read(name)
    assert now == before, (f"{name}: {_first_difference(before, now)}; if the change of answer "
                           "is intended, run scripts/golden --write and say why in the commit")
