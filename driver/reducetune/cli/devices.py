"""``reducetune devices``: the GPUs of this machine and the devices in the database."""

from __future__ import annotations

import argparse

from reducetune import _core, errors
from reducetune._no_gpu import device_problem
from reducetune.cli.args import add_db, db_path
from reducetune.store.results import open_store


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("devices", help="GPUs of this machine and devices in the database")
    add_db(p)


def cmd_devices(args: argparse.Namespace) -> int:
    found = _print_gpus()
    db = db_path(args)
    if db.exists():
        for d in open_store(db, read_only=True).devices():
            found += 1
            print(f"in {db}: {d['name']} sm_{d['cc_major']}{d['cc_minor']} {d['uuid']}")
    elif args.db is not None:  # named and missing: a typo, said even when GPUs were listed
        raise errors.StoreError(f"no database at {db}: name an existing results file with "
                                "--db (reducetune tune writes one)")
    if not found:  # an exit status of 1 says why, on stderr, not only on stdout
        where = f"{db} holds no device" if db.exists() else f"no database at {db}"
        raise errors.DeviceError(f"no GPU on this machine and {where}: run on a machine with "
                                 "an NVIDIA GPU and its driver, or name a results file with --db")
    return 0


def _print_gpus() -> int:
    """One line per GPU that the driver reports; how many there are."""
    found = 0
    for ordinal in range(64):
        try:
            d = _core.query_device(ordinal)
        except errors.DeviceError as e:
            if ordinal == 0:
                print(device_problem(str(e)))
            break
        found += 1
        print(f"GPU {ordinal}: {d['name']} sm_{d['arch']} {d['sm_count']} SMs "
              f"{d['global_memory_bytes'] / 2**30:.0f} GiB, peak "
              f"{d['peak_bytes_per_s'] / 1e9:.0f} GB/s, {d['uuid']}")
    return found


COMMANDS = {"devices": cmd_devices}
