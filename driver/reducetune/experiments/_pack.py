"""Packs an experiment's database for committing: VACUUM, xz-compress, and write the sidecar
that says what it holds (read from the file itself: devices, measurement dates, the commands
that measured, counts by status, checksums).

    python3 -m reducetune.experiments._pack /tmp/h100_harris.db "$OUT/h100_harris.db.xz"

writes ``$OUT/h100_harris.db.xz`` and ``$OUT/h100_harris.json``. Uses Python's lzma, so the
GPU machine needs no xz.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import shutil
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def describe(db: Path) -> dict[str, Any]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        devices = [dict(zip(("name", "uuid", "cc_major", "cc_minor", "sm_count",
                             "driver_version", "toolkit_version"), r)) for r in con.execute(
            "SELECT name, uuid, cc_major, cc_minor, sm_count, driver_version, toolkit_version "
            "FROM rt_devices ORDER BY id")]
        first, last = con.execute("SELECT MIN(created_at), MAX(created_at) FROM "
                                  "rt_measurements").fetchone()
        status = dict(con.execute("SELECT status, COUNT(*) FROM rt_measurements "
                                  "GROUP BY status").fetchall())
        configs = [json.loads(c) for (c,) in con.execute(
            "SELECT config FROM rt_studies WHERE name LIKE 'experiment.%' ORDER BY id")]
    return {"what": "measurements of a reducetune experiment on a GPU (real, not synthetic)",
            "devices": devices, "measured_utc": [first, last], "status": status,
            "commands": list(dict.fromkeys(c.get("command", "") for c in configs)),
            "sampling": configs[0].get("sampling") if configs else None}


def main(argv: list[str]) -> int:
    db, packed = Path(argv[0]), Path(argv[1])
    with closing(sqlite3.connect(db)) as con:
        con.execute("VACUUM")
    packed.parent.mkdir(parents=True, exist_ok=True)
    with db.open("rb") as fin, lzma.open(packed, "wb", preset=9) as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)
    side = {"database": packed.name, **describe(db),
            "sha256": {"db.xz": _sha256(packed), "db": _sha256(db)}}
    stem = packed.name[: -len(".db.xz")] if packed.name.endswith(".db.xz") else packed.stem
    (packed.parent / f"{stem}.json").write_text(json.dumps(side, indent=2) + "\n")
    print(f"packed {db} -> {packed} ({packed.stat().st_size} bytes) and {stem}.json",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
