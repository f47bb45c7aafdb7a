"""Device probe: every streaming read shape's rate against CUB at 2^30 floats, in the tuner's
protocol (cold L2, gated), alternated ROUNDS times in one process.

gpu_test_baselines asks that CUB stay within 1 % of the streaming ceiling. On fast H200 hosts
CUB read 4 GB 1-2 % faster than the best of the ceiling's six shapes (twelfth session's note);
0bd0e48 added four shapes (streaming_read.cu). This prints which shape wins, and by how much.

    python3 scripts/device-jobs/ceiling_shapes.py --out OUT/ceiling_shapes.json [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from reducetune import _core
from reducetune.evaluate.base import workload
from reducetune.tuning.config import TuneConfig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    options = TuneConfig(dtype="float32", op="sum").sampling()  # the tune's: cold only
    cub_key = workload("float32", "sum", 1 << 30)
    rounds = []
    for r in range(args.rounds):
        ceiling = _core.streaming_ceiling(0)
        cub = _core.evaluate_cub(cub_key, 0, options)
        rate = cub.get("bytes_per_s", 0.0)
        rounds.append({"ceiling": {k: ceiling[k] for k in ("bytes_per_s", "shape", "shapes")},
                       "cub_bytes_per_s": rate, "cub_status": cub.get("status")})
        print(f"round {r}: CUB {rate / 1e9:.0f} GB/s ({cub.get('status')}); ceiling "
              f"{ceiling['bytes_per_s'] / 1e9:.0f} GB/s by {ceiling['shape']}; "
              f"CUB / ceiling {rate / ceiling['bytes_per_s']:.3f}")
        for s in ceiling["shapes"]:
            print(f"    {s['shape']:28s} {s['bytes_per_s'] / 1e9:7.0f} GB/s")
    doc = {"device": _core.query_device(0).get("name"), "options": options, "rounds": rounds}
    args.out.write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
