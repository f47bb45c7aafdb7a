"""The extension exports PyInit__core and nothing else of its own code.

On the GPU machine, whose toolchain links libstdc++ statically, the extension used to export
its static archives' symbols (our layers, cudart_static, libstdc++), and `import torch` after
`import reducetune` crashed. The link now hides them (driver/CMakeLists.txt); this checks that
the built module keeps it so."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

import reducetune._core as core


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF symbol tables: Linux only")
def test_only_the_module_init_function_is_exported():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run([nm, "-D", "--defined-only", core.__file__], check=True,
                         capture_output=True, text=True).stdout
    functions = sorted(line.split()[-1] for line in out.splitlines()
                       if len(line.split()) == 3 and line.split()[1] == "T")
    assert functions == ["PyInit__core"], f"{len(functions)} exported: {functions[:10]}"
