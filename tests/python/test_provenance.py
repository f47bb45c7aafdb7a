"""Which commit a benchmark file names: the git tree's, or REDUCETUNE_COMMIT where the tree has
no .git (the GPU machine's copy), never a blank."""

from __future__ import annotations

import subprocess
from pathlib import Path

from reducetune.benchmarks import _provenance
from reducetune.benchmarks._provenance import reducetune_commit


def test_the_variable_names_the_commit_where_set(monkeypatch):
    monkeypatch.setenv("REDUCETUNE_COMMIT", " 23a5ecd \n")
    assert reducetune_commit() == "23a5ecd"


def test_without_the_variable_only_the_packages_own_tree_is_asked(monkeypatch):
    # imported from the source tree: its commit; installed elsewhere (inside another
    # repository, such as a pyenv checkout, or none): "unknown", never a foreign commit
    monkeypatch.delenv("REDUCETUNE_COMMIT", raising=False)
    root = Path(_provenance.__file__).resolve().parents[3]
    top = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True, check=False).stdout.strip()
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=7", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()
    got = reducetune_commit()
    if top == str(root) and head:
        assert head[:7] in got
    else:
        assert got == "unknown"


def test_a_package_inside_another_repository_is_unknown(monkeypatch, tmp_path):
    monkeypatch.delenv("REDUCETUNE_COMMIT", raising=False)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    fake = tmp_path / "lib" / "site" / "reducetune" / "benchmarks" / "_provenance.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("")
    monkeypatch.setattr(_provenance, "__file__", str(fake))
    assert reducetune_commit() == "unknown"


def test_a_blank_variable_is_ignored(monkeypatch):
    monkeypatch.setenv("REDUCETUNE_COMMIT", "  ")
    assert reducetune_commit() != ""
