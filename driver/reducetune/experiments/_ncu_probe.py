"""The process Nsight Compute profiles for one experiment row (``_ncu.py``): compiles, runs
and verifies one point on one workload with the shortest sampling rule (10 samples), in this
process, so that ncu sees its kernels. Prints the result's status on stderr.

    python -m reducetune.experiments._ncu_probe VARIANT LAUNCH DTYPE OP N
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    from reducetune import _core
    from reducetune._evaluators import sampling_options, workload

    variant, launch, dtype, op, n = argv
    result = _core.evaluate(variant, launch, workload(dtype, op, int(n)), 0,
                            sampling_options(1e-3, 10, False))
    print(json.dumps({k: result.get(k) for k in ("status", "reason", "median_s", "launches")}),
          file=sys.stderr)
    return 0 if result.get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
