"""Which commit a benchmark file names: the git tree's, or REDUCETUNE_COMMIT where the tree has
no .git (the GPU machine's copy), never a blank."""

from __future__ import annotations

import subprocess
from pathlib import Path

from reducetune.benchmarks._provenance import reducetune_commit


def test_the_variable_names_the_commit_where_set(monkeypatch):
    monkeypatch.setenv("REDUCETUNE_COMMIT", " 23a5ecd \n")
    assert reducetune_commit() == "23a5ecd"


def test_without_the_variable_the_tree_is_asked(monkeypatch):
    monkeypatch.delenv("REDUCETUNE_COMMIT", raising=False)
    root = Path(__file__).resolve().parents[2]
    git = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=7", "HEAD"],
                         capture_output=True, text=True, check=False)
    got = reducetune_commit()
    if git.returncode == 0:
        assert got.startswith(git.stdout.strip()[:7]) or git.stdout.strip()[:7] in got
    else:
        assert got == "unknown"


def test_a_blank_variable_is_ignored(monkeypatch):
    monkeypatch.setenv("REDUCETUNE_COMMIT", "  ")
    assert reducetune_commit() != ""
