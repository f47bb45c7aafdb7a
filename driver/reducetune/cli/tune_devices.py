"""``reducetune tune --devices 0,1`` (or ``all``): one worker process per GPU.

Each worker is this command for one device (``--devices K``), in its own process, writing
to the same results file (--db) and opening the same Optuna storage (the results file, or
--storage). Its studies are keyed by the device model (``TuneConfig.by_model``), so the
workers of GPUs of one model (name, SM count, memory clock) share each (dtype, op, n) study
(store/study_share.py: one budget, no point measured twice) and other models get their own. Every
measurement names the GPU (UUID) that took it.

In replay (``--replay``) there is no GPU: each listed device is a worker replaying the
recording's device (``--device`` picks it, default the first), under its UUID. N replay
workers thus behave as N processes of one GPU model sharing its studies, which is what the
tests need without a GPU.

A worker that fails (killed, a GPU fault that ends it) leaves the others running; its
trial is failed and its point re-queued (store/study_share.py). The command then exits 1 and says
which worker failed; running it again resumes every study without measuring a point twice.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from contextlib import nullcontext
from dataclasses import asdict
from pathlib import Path
from typing import Any

from reducetune import errors
from reducetune.cli.args import INT_MAX, db_path
from reducetune.cli.console import console
from reducetune.cli.report import time_table
from reducetune.evaluate._gpu_share import CompileShare, run_folder
from reducetune.evaluate._visible_gpus import visible_gpu_count
from reducetune.store.files import holds_no_results
from reducetune.store.results import open_store
from reducetune.store.study_storage import optuna_tables

__all__ = ["parse_devices", "run_devices"]

# True in a --devices worker (cli/device_worker.py): the command that started it asked for the
# GPUs' count already. Asking again cost each worker a process, the extension's import and
# CUDA's start before its first point (part of its 3.1-3.2 s start on 2 x H100, issue 25).
counted_by_parent = False
# A list's count started by parse_devices, by the option's text: run_devices reads it while its
# workers start (their imports, their GPU workers), and lets them on only if every ordinal is
# a GPU of this machine (else they are killed before touching any file).
_counting: dict[str, subprocess.Popen[str]] = {}


def parse_devices(text: str, replay: bool) -> list[int]:
    """GPU ordinals from ``0,1,3`` or ``all`` (every GPU the driver reports; in replay, 0).
    Outside replay an ordinal must be a GPU of this machine, asked before any file is touched
    (a worker for a GPU that does not exist would only fail later). In replay the ordinals
    name workers, but stay C ints as ordinals are."""
    if text.strip() == "all":
        return [0] if replay else list(range(_gpu_count(text)))
    items = [x.strip() for x in text.split(",") if x.strip()]
    # 0-9 only: int() would also read Arabic-Indic or fullwidth digits
    if not items or not all(re.fullmatch(r"[0-9]{1,10}", x) for x in items):
        raise errors.InvalidConfiguration(
            f"--devices takes GPU ordinals (0,1) or all, not {text[:40]!r}")
    ordinals = [int(x) for x in items]
    if len(set(ordinals)) != len(ordinals):
        raise errors.InvalidConfiguration(f"--devices {text!r}: distinct ordinals >= 0")
    if max(ordinals) > INT_MAX:
        raise errors.InvalidConfiguration(
            f"--devices {text!r}: an ordinal is at most {INT_MAX} (a CUDA device ordinal)")
    if not replay and not counted_by_parent:
        # the driver's files answer at once (_visible_gpus.py); where they cannot, a list is
        # counted by cuInit while its workers start (run_devices), one ordinal here
        files = visible_gpu_count()
        if files is None and len(ordinals) > 1:
            _counting[text] = _count_started()
        else:
            _check_ordinals(text, ordinals, _gpu_count(text) if files is None else files)
    return ordinals


def _check_ordinals(text: str, ordinals: list[int], count: int) -> None:
    beyond = [k for k in ordinals if k >= count]
    if beyond:
        raise errors.InvalidConfiguration(
            f"--devices {text}: this machine has {count} GPU(s), ordinals 0 to {count - 1}; "
            f"no GPU {', '.join(map(str, beyond))}")


# The count's child: the driver API through ctypes (cuInit, cuDeviceGetCount on libcuda.so.1),
# which honours CUDA_VISIBLE_DEVICES as the workers' CUDA does. It imports neither reducetune
# (the whole package and the extension) nor the CUDA runtime, as the child did until
# 2026-11-26: the command lets its workers on only once the count is read (_let_on), and that
# child's imports and runtime start were part of every worker's wait for its go (issue 25). No
# libcuda, or CUDA_ERROR_NO_DEVICE: 0 and nothing said, the words of a machine without a GPU;
# another error of cuInit is named on stderr (a driver that does not match the kernel's).
_COUNT = """
import ctypes, sys
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError:
    print(0)
    sys.exit(0)
n = ctypes.c_int(0)
rc = cuda.cuInit(0) or cuda.cuDeviceGetCount(ctypes.byref(n))
if rc and rc != 100:
    name = ctypes.c_char_p()
    cuda.cuGetErrorName(rc, ctypes.byref(name))
    print("cuInit:", (name.value or b"").decode() or rc, file=sys.stderr)
print(n.value if not rc else 0)
"""


def _count_started() -> subprocess.Popen[str]:
    """A child process asking how many GPUs the driver reports (_COUNT). A child, not a call
    here: this process, which only starts and waits for the workers, keeps no CUDA driver state
    (cuInit opens the devices and starts the driver's threads) and its count overlaps the
    workers' start. -S: no site-packages, which the count does not need."""
    return subprocess.Popen([sys.executable, "-S", "-c", _COUNT], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _gpu_count(option: str, child: subprocess.Popen[str] | None = None) -> int:
    """How many GPUs this process's CUDA would see: the driver's files (_visible_gpus.py, a
    millisecond), else cuInit's count (``child``: that count started already; 1.3 s on a host
    of four H200s, 0.5 s with one visible)."""
    count = visible_gpu_count() if child is None else None
    if count is not None:
        return count
    out, err = (child or _count_started()).communicate()
    count = int(out.strip() or 0)
    if count == 0:
        why = f" ({err.strip()[-200:]})" if err.strip() else ""
        raise errors.DeviceError(f"--devices {option}: no GPU found on this machine{why} "
                                 "(use --replay DB to tune from a recorded database)")
    return count


# How a worker runs (python -c WORKER_CODE ARGS_JSON): its GPU worker started (device_worker.
# prestart_for) after the package's import only. ``-m reducetune.cli.device_worker`` imported
# the CLI's package first, every command's module (50 ms on this 2-core machine), before that
# GPU worker's process and CUDA's start, the longest part of a worker's start (issue 25).
WORKER_CODE = """import json, sys
from reducetune.evaluate.gpu import prestart
d = json.loads(sys.argv[1])
if d.get("replay") is None and not d.get("in_process"):  # as device_worker.prestart_for
    prestart(int(d["device"]), ceiling=True)
from reducetune.cli.device_worker import worker_main
sys.exit(worker_main(sys.argv[1:]))
"""


def _worker_args(args: argparse.Namespace, ordinal: int, share: CompileShare) -> str:
    """The worker's arguments: this command's, for one device, printing JSON, with its share
    of the host's compiles (evaluate/_gpu_share.py)."""
    keep = {k: v for k, v in vars(args).items() if not callable(v)}
    keep.update(devices=str(ordinal), quiet=True, json=True, await_go=True,
                compile_share=asdict(share))
    if args.replay is None:
        keep["device"] = ordinal
    return json.dumps(keep, default=str)


def run_devices(args: argparse.Namespace, ordinals: list[int]) -> int:
    """Starts one worker per device, waits for all, prints what each found and where each
    one's time went (per worker: its phases, and ``idle``, the command's wall time less its
    own: its start and its wait for the others, ``_idle``)."""
    began, began_at = time.perf_counter(), time.time()
    # the folder through which the GPU workers share their programs (none in replay: no GPU)
    with (nullcontext("") if args.replay is not None else run_folder(db_path(args))) as folder:
        procs = [subprocess.Popen(
            [sys.executable, "-c", WORKER_CODE,
             _worker_args(args, k, CompileShare(i, len(ordinals), folder))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for i, k in enumerate(ordinals)]
        _let_on(procs, args.devices, ordinals)
        fresh = _make_file(args)  # while the workers start
        outs = [p.communicate()[0] for p in procs]  # stderr goes through: warnings, errors
    wall_s = time.perf_counter() - began
    docs: list[dict[str, Any]] = []
    failed = []
    for k, p, out in zip(ordinals, procs, outs, strict=True):
        try:
            doc = json.loads(out) if p.returncode == 0 else None
        except json.JSONDecodeError:
            doc = None
        if doc is None:
            failed.append(f"device {k} (exit {p.returncode})")
            continue
        docs.append({"ordinal": k, **doc})
    for d in docs:
        if "time" in d:
            _idle(d["time"], wall_s, began_at)
    if args.json:
        print(json.dumps({"workers": docs, "failed": failed, "wall_s": wall_s}, indent=2))
    else:
        _print_summary(docs)
        console().print(time_table([(f"GPU {d['ordinal']}", d["time"]) for d in docs
                                    if "time" in d], wall_s))
    if fresh and not docs:
        _remove_if_empty(db_path(args))
    if failed:
        print(f"reducetune: worker failed: {', '.join(failed)}; the others finished; run the "
              "same command again to resume", file=sys.stderr)
        return 1
    return 0


def _let_on(procs: list[subprocess.Popen[str]], text: str, ordinals: list[int]) -> None:
    """Lets the starting workers on (they wait for it before touching any file) once the
    list's count, read while they start, says every ordinal is a GPU here; else kills them and
    refuses the list as parse_devices would have."""
    try:
        if text in _counting:
            _check_ordinals(text, ordinals, _gpu_count(text, _counting.pop(text)))
    except BaseException:
        for p in procs:
            p.kill()
            p.wait()
        raise
    for p in procs:
        assert p.stdin
        try:
            p.stdin.write("go\n")
            p.stdin.flush()  # closed by communicate()
        except BrokenPipeError:  # it died while starting: run_devices names it by its status,
            pass  # and the others still go on


def _make_file(args: argparse.Namespace) -> bool:
    """The results file made (or migrated) and, without --storage, Optuna's tables in it, by
    this process while its workers start (their imports, their evaluators): else the first
    worker made them (alembic: 0.6 s here, 2.5-3.5 s on a loaded machine) while the others
    waited for the file's lock, and started measuring that much later than it. Returns whether
    the file is new (removed again if every worker fails before recording anything). A file
    this cannot open is left to the workers, which say why; so is --db naming the recording."""
    db = db_path(args)
    if args.replay is not None and (db.resolve() == Path(args.replay).resolve() or (
            db.exists() and os.path.samefile(db, args.replay))):
        return False
    fresh = not db.exists()
    try:
        open_store(db).close()
        if args.storage is None:
            optuna_tables(db)
    except (errors.Error, OSError):
        pass
    return fresh


def _remove_if_empty(db: Path) -> None:
    """A file made here for workers that all failed, holding nothing: not left behind, as a
    failed one-device tune leaves none (cli/tune.py)."""
    if db.exists() and holds_no_results(db):
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)


def _idle(t: dict[str, Any], wall_s: float, began_at: float) -> None:
    """A worker's ``idle_s`` (the command's wall time less its own), split into ``start_s``
    (the command's start to the worker's run: its process, imports, files opened) and
    ``wait_s`` (the worker's end to the command's: the last worker still running)."""
    t["idle_s"] = max(0.0, wall_s - t["wall_s"])
    t["start_s"] = min(t["idle_s"], max(0.0, t.get("began_at", began_at) - began_at))
    t["wait_s"] = t["idle_s"] - t["start_s"]


def _print_summary(docs: list[dict[str, Any]]) -> None:
    """Per worker and workload: its device, what it measured, and the best it saw."""
    for d in docs:
        for run in d.get("runs", [d]):
            dev = run["device"]
            for s in run["sizes"]:
                best = s.get("best") or {}
                label = f"{best.get('variant_label', '-')} {best.get('launch_label', '')}"
                # a size as n=..., a shape as tune --shapes spells it (OUTERxRxINNER)
                unit = ("shape=" + "x".join(map(str, s["shape"])) if s.get("shape")
                        else f"n={s['n']}")
                print(f"GPU {d['ordinal']} {dev['name']} ({dev['uuid']}) "
                      f"{run.get('dtype', '')} {run.get('op', '')} {unit}: "
                      f"{s['evaluated']} measured, {s['points']} points in the study "
                      f"({s['stopped']}); best {label}")
