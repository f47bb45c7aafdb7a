"""The extension's type stub (driver/reducetune/_core.pyi) is nanobind's stubgen output for the
extension being tested, never a hand-written copy: a binding added, renamed or retyped without
`scripts/update-stub` fails here."""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "driver" / "reducetune" / "_core.pyi"


def _generated(tmp_path: Path) -> str:
    pytest.importorskip("nanobind.stubgen", reason="nanobind is not installed (scripts/setup)")
    out = tmp_path / "_core.pyi"
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "reducetune._core",
                    "-o", str(out)], check=True, capture_output=True, text=True)
    return out.read_text()


def test_the_committed_stub_is_stubgens_output_for_the_extension(tmp_path):
    generated = _generated(tmp_path)
    committed = COMMITTED.read_text()
    diff = "".join(difflib.unified_diff(committed.splitlines(True), generated.splitlines(True),
                                        "committed _core.pyi", "stubgen", n=1))
    assert committed == generated, ("driver/reducetune/_core.pyi is stale: run scripts/update-stub"
                                    " and commit it\n" + diff[:4000])


def test_the_stub_names_every_public_binding(tmp_path):
    """A binding the stub leaves out is a binding a type checker calls an error."""
    from reducetune import _core

    text = _generated(tmp_path)
    public = [n for n in dir(_core) if not n.startswith("_")]
    assert public
    missing = [n for n in public if f"def {n}(" not in text and f"class {n}" not in text
               and f"{n}:" not in text and f"{n} =" not in text]
    assert missing == []
