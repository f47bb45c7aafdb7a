"""The GPU worker leaves quietly when the tuner's end of its pipe is gone (.ci/run on a887bbf:
'tune --devices 0,4096' refused its devices while the prestarted worker was answering, and the
worker's BrokenPipeError traceback reached the user's terminal under the one-line refusal)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import reducetune

# where this test's reducetune was imported from (the source tree's driver/ with its built
# extension, or an installed copy: CI's has no extension in the clone's driver/)
PACKAGE_ROOT = Path(reducetune.__file__).resolve().parents[1]


def test_a_worker_whose_reader_is_gone_exits_without_a_traceback():
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    p = subprocess.Popen([sys.executable, "-c", "from reducetune.evaluate.gpu import worker_main; "
                          "worker_main()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    p.stdout.close()  # the tuner's end is gone before the reply
    # a malformed request gets a reply without touching a GPU
    _, err = p.communicate(b"[1, 2]\n" * 64, timeout=60)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err.decode()
    assert p.returncode == 0
