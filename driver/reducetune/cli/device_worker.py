"""One worker of ``reducetune tune --devices``:
``python -m reducetune.cli.device_worker ARGS_JSON``.

``tune_devices.run_devices`` starts one per device with the tune command's arguments for that
device (JSON); the worker runs them as the command line would, exit statuses included. A
module of its own, above the command table, so that no command module imports the entry
point that imports it (the cycle cli -> tune -> tune_devices -> cli).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reducetune.evaluate._gpu_share import CompileShare, share_compiles
from reducetune.evaluate.gpu import prestart

__all__ = ["prestart_for", "worker_main"]

def prestart_for(d: dict) -> None:
    """The GPU worker of the arguments ``d`` started (a second call starts nothing more): its
    device, and the streaming ceiling its tune run measures first. In replay or in process
    there is no GPU worker to start. tune_devices.WORKER_CODE makes the same call before this
    module's package is imported."""
    if d.get("replay") is None and not d.get("in_process"):
        prestart(int(d["device"]), ceiling=True)


def worker_main(argv: list[str]) -> int:
    """Runs the tune command of ``argv[0]`` (the JSON of its arguments) and gives its status.
    Its GPU worker starts first, so that its process and CUDA's start overlap this one's
    imports and files (issue 25); the ordinals were checked by the command that started it."""
    d = json.loads(argv[0])
    prestart_for(d)  # started already where the command ran tune_devices.WORKER_CODE
    from reducetune.cli import tune_devices  # after prestart: the CLI's imports overlap it
    from reducetune.cli.app import dispatch
    from reducetune.store.study_storage import import_ahead

    tune_devices.counted_by_parent = True
    # which of the run's GPU workers this is, and their folder: its evaluator's compiles
    share_compiles(CompileShare(**d.pop("compile_share", {})))
    import_ahead()  # Optuna's imports while this worker waits for its go (they touch no file)
    # the command lets its workers on once their GPUs are counted (tune_devices._let_on)
    if d.pop("await_go", False) and sys.stdin.readline().strip() != "go":
        return 1
    for key in ("db", "replay"):
        if d.get(key) is not None:
            d[key] = Path(d[key])
    return dispatch(argparse.Namespace(**d))


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
