"""The process Nsight Compute profiles for one experiment row (``_ncu.py``): compiles, runs
and verifies one point on one workload, in this process, so that ncu sees its kernels; one
sample, launched directly (no CUDA graph). Its timing is not kept: under ncu every launch is
serialized, and the sampler's gate kernel (cuda/stream_gate.hpp) waits out its one-second
timeout instead of being released; the protocol's 10 samples would cost 10 s per row.
Prints the result's status on stderr.

    python -m reducetune.experiments._ncu_probe POINT N

POINT is the point as JSON (``Point.to_dict()``: family, dtype, op, parameters by name), which
``_core.evaluate`` takes as it is: no label is read back. N is the whole array's size, or an
axis shape OUTER,R,INNER (scripts/device-jobs/axis_ncu.py).
"""

from __future__ import annotations

import json
import sys

from reducetune import _core
from reducetune.evaluate.base import MAX_NOISE, data_of, problem_of, workload


def size_of(text: str) -> int | tuple[int, int, int]:
    """N as workload() takes it: a size, or the shape (outer, r, inner) of "OUTER,R,INNER"."""
    parts = tuple(int(v) for v in text.split(","))
    if len(parts) not in (1, 3):
        raise SystemExit(f"N: a size or OUTER,R,INNER, not {text!r}")
    return parts[0] if len(parts) == 1 else (parts[0], parts[1], parts[2])


def main(argv: list[str]) -> int:
    point_json, n = argv
    point = json.loads(point_json)
    options = {"hot": False, "graph": False, "min_samples": 1, "max_samples": 1,
               "max_noise": MAX_NOISE, "time_cap_s": 1e-3}
    w = workload(point["dtype"], point["op"], size_of(n))
    result = _core.evaluate(point, problem_of(w), data_of(w), 0, options)
    print(json.dumps({k: result.get(k) for k in ("status", "reason", "median_s", "launches")}),
          file=sys.stderr)
    return 0 if result.get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
