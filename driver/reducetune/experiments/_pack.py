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
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from reducetune.store.files import studies, vacuum
from reducetune.store.measurements import measurement_rows
from reducetune.store.results import open_store


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def describe(db: Path) -> dict[str, Any]:
    """What the recording holds, read through the store's public read path."""
    store = open_store(db, create=False, read_only=True)
    try:
        devices = [{k: d[k] for k in ("name", "uuid", "cc_major", "cc_minor", "sm_count",
                                      "driver_version", "toolkit_version")}
                   for d in sorted(store.devices(), key=lambda d: d["id"])]
    finally:
        store.close()
    rows = measurement_rows(db)
    stamps = [r["created_at"] for r in rows]
    status = Counter(r["status"] for r in rows)
    configs = [s["config"] for s in studies(db).values() if s["name"].startswith("experiment.")]
    return {"what": "measurements of a reducetune experiment on a GPU (real, not synthetic)",
            "devices": devices,
            "measured_utc": [min(stamps), max(stamps)] if stamps else [None, None],
            "status": dict(sorted(status.items())),
            "commands": list(dict.fromkeys(c.get("command", "") for c in configs)),
            "sampling": configs[0].get("sampling") if configs else None}


def main(argv: list[str]) -> int:
    db, packed = Path(argv[0]), Path(argv[1])
    vacuum(db)
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
