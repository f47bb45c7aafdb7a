"""scripts/check-layers and scripts/check-sizes: the tree passes them, and a tree with a
wrong-way include, a file in no layer, an 81-line function or a 401-line file fails, naming
the file. Runs without the extension or a GPU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "scripts" / script), *args],
                          capture_output=True, text=True, check=False)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def function_of(lines: int, name: str) -> str:
    """A C++ function spanning exactly `lines` lines, signature to closing brace."""
    body = "".join(f"  x += {i};\n" for i in range(lines - 3))
    return f"int {name}(int x) {{\n{body}  return x;\n}}\n"


def tracked(*patterns: str) -> list[str]:
    """The repository's files under these paths, tracked or new but not ignored (git
    ls-files, so that build folders are left out), relative paths."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                          "--", *patterns], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout
    return sorted({f for f in out.split() if (REPO / f).is_file()})


def copy_seeded(tmp: Path, files: list[str], suffix_line) -> Path:
    """A copy of the given files of the tree, each with one line appended (or None: as is)."""
    for rel in files:
        text = (REPO / rel).read_text(errors="replace")
        extra = suffix_line(rel)
        write(tmp, rel, text if extra is None else text.rstrip("\n") + "\n" + extra + "\n")
    return tmp


def test_the_tree_keeps_its_layers(tmp_path: Path) -> None:
    """The tree passes; and the same tree with an include of no layer appended to each of
    its C++ files fails naming every one, so the check reads every file of the layered
    folders (a folder it stopped looking at would pass unchecked)."""
    result = run("check-layers")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "errors -> templates -> space -> db -> jit -> cuda" in result.stdout
    cpp = [f for f in tracked("tuner", "db", "driver/src")
           if Path(f).suffix in {".cpp", ".hpp", ".cu", ".cuh", ".h", ".cc"}]
    assert len(cpp) > 100
    copy_seeded(tmp_path, cpp, lambda rel: '#include "reducetune/no_layer/seeded.hpp"')
    seeded = run("check-layers", "--root", str(tmp_path))
    assert seeded.returncode == 1
    named = {line.split(":", 1)[0] for line in seeded.stdout.splitlines()
             if "reducetune/no_layer/seeded.hpp" in line}
    assert named == set(cpp), sorted(named ^ set(cpp))


def test_the_tree_keeps_its_size_limits(tmp_path: Path) -> None:
    """The tree passes; and the same tree with every source file of tuner/, db/ and driver/
    pushed past 400 lines fails naming every one, so the check reads every file it must."""
    result = run("check-sizes")
    assert result.returncode == 0, result.stdout + result.stderr
    sources = [f for f in tracked("tuner", "db", "driver")
               if Path(f).suffix in {".cpp", ".hpp", ".cu", ".cuh", ".py"}]
    assert len(sources) > 150
    comment = {".py": "#"}
    copy_seeded(tmp_path, sources, lambda rel: "\n".join(
        [comment.get(Path(rel).suffix, "//")] * 401))
    seeded = run("check-sizes", "--root", str(tmp_path))
    assert seeded.returncode == 1
    named = {line.split(":", 1)[0] for line in seeded.stdout.splitlines()
             if line.endswith("lines (at most 400)")}
    assert named == set(sources), sorted(named ^ set(sources))


def test_an_include_of_a_higher_layer_fails_and_names_the_file(tmp_path: Path) -> None:
    write(tmp_path, "tuner/reducetune/jit/compiler.hpp",
          '#include "reducetune/space/family.hpp"\n#include "reducetune/errors.hpp"\n')
    write(tmp_path, "tuner/reducetune/space/family.cpp",
          '#include "reducetune/space/family.hpp"\n\n#include "reducetune/jit/compiler.hpp"\n')
    write(tmp_path, "db/reducetune/db/store.cpp", '#include "reducetune/space/family.hpp"\n')
    result = run("check-layers", "--root", str(tmp_path))
    assert result.returncode == 1
    problems = [line for line in result.stdout.splitlines() if not line.startswith("check-")]
    assert problems == [
        'tuner/reducetune/space/family.cpp:3: layer space includes "reducetune/jit/compiler.hpp"'
        " of layer jit, which is above it (order: scripts/layers.txt)"
    ]


def test_a_file_outside_every_layer_and_an_unknown_include_fail(tmp_path: Path) -> None:
    write(tmp_path, "tuner/reducetune/newlayer/thing.cpp", "int thing();\n")
    write(tmp_path, "tuner/tools/tool.cpp", '#include "reducetune/runner/old.hpp"\n')
    result = run("check-layers", "--root", str(tmp_path))
    assert result.returncode == 1
    assert "tuner/reducetune/newlayer/thing.cpp: belongs to no layer" in result.stdout
    assert 'tuner/tools/tool.cpp:1: "reducetune/runner/old.hpp" is in no layer' in result.stdout


def test_an_81_line_function_fails_and_an_80_line_one_passes(tmp_path: Path) -> None:
    write(tmp_path, "tuner/reducetune/space/long.cpp",
          function_of(80, "just_fits") + "\n" + function_of(81, "one_too_many"))
    result = run("check-sizes", "--root", str(tmp_path))
    assert result.returncode == 1
    assert "tuner/reducetune/space/long.cpp:" in result.stdout
    assert "function one_too_many is 81 lines" in result.stdout
    assert "just_fits" not in result.stdout


def test_a_401_line_file_fails_and_a_400_line_one_passes(tmp_path: Path) -> None:
    write(tmp_path, "driver/reducetune/fits.py", "x = 1\n" * 400)
    write(tmp_path, "db/reducetune/db/too_long.hpp", "// line\n" * 401)
    result = run("check-sizes", "--root", str(tmp_path))
    assert result.returncode == 1
    assert "db/reducetune/db/too_long.hpp: 401 lines (at most 400)" in result.stdout
    assert "fits.py" not in result.stdout
