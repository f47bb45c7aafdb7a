"""The seeds' published tables, transcribed once (the harris experiment reproduces them).

Each row names the preset of the seeds (or nested) family that implements its kernel and
cites the seed file and line it comes from (``../shared/seeds/``, outside the repository).
Published numbers are the seeds' own: their GPUs, their timers, their bandwidth formulas
(``note`` says where a formula differs from ours: bytes read / median time).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reducetune._space import parameter_values

__all__ = ["SeedRow", "SeedTable", "TABLES", "table_named"]


@dataclass(frozen=True)
class SeedRow:
    name: str  # the row's name in the seed
    family: str  # template family of its kernel
    preset: str  # the preset of that family (the seed's kernel and launch)
    line: int  # line of the seed file the numbers are on
    time_ms: float | None  # published time (None: the seed gives none)
    gbps: float | None = None  # published bandwidth
    step: float | None = None  # published step speed-up over the previous row
    cumulative: float | None = None  # published cumulative speed-up
    extra: dict[str, float] = field(default_factory=dict)  # other published columns
    # launch parameters tuned besides block_size: max_blocks only changes the grid of the
    # grid-stride kernel (harris6); for the others it changes nothing but the label
    tuned_launch: tuple[str, ...] = ()


@dataclass(frozen=True)
class SeedTable:
    key: str
    title: str
    source: str  # seed file name under ../shared/seeds/
    gpu: str  # the GPU the seed measured on
    dtype: str
    n: int
    rows: tuple[SeedRow, ...]
    note: str = ""
    # the block sizes the tuned launch is chosen from: by default every one the seeds'
    # family declares (kernel_templates/seeds/family.json), read from the declaration
    block_sizes: tuple[int, ...] = field(
        default_factory=lambda: tuple(int(v) for v in parameter_values("seeds", "block_size")))


_G80 = "000_56e0bb9782c7212a.txt"
_K3100M = "002_059fe02cbd0bbc1b.txt"
_COURSE = "003_01fc139e19efb6d6.txt"
_SMEM = "004_53302091cfe0f7dc.txt"

TABLES: tuple[SeedTable, ...] = (
    SeedTable(
        "g80", "Harris's seven kernels (G80, 2^22 ints)", _G80, "NVIDIA G80 (8800 GTX)",
        "int32", 1 << 22, (
            SeedRow("Kernel 1: interleaved addressing, divergent branching", "seeds", "harris0",
                    910, 8.054, 2.083),
            SeedRow("Kernel 2: interleaved addressing, bank conflicts", "seeds", "harris1",
                    911, 3.456, 4.854, 2.33, 2.33),
            SeedRow("Kernel 3: sequential addressing", "seeds", "harris2", 912, 1.722, 9.741,
                    2.01, 4.68),
            SeedRow("Kernel 4: first add during global load", "seeds", "harris3", 913, 0.965,
                    17.377, 1.78, 8.34),
            SeedRow("Kernel 5: unroll last warp", "seeds", "harris4", 914, 0.536, 31.289, 1.8,
                    15.01),
            SeedRow("Kernel 6: completely unrolled", "seeds", "harris5", 915, 0.381, 43.996,
                    1.41, 21.16),
            SeedRow("Kernel 7: multiple elements per thread", "seeds", "harris6", 916, 0.268,
                    62.671, 1.42, 30.04, tuned_launch=("max_blocks",)),
        ),
        note="Harris's bandwidth is 2^22 x 4 bytes / time, as ours."),
    SeedTable(
        "k3100m", "reduce_v0..v6 (Quadro K3100M, 2^20 floats)", _K3100M,
        "NVIDIA Quadro K3100M (cc 3.0)", "float32", 1 << 20, (
            SeedRow("reduce_0: naive", "seeds", "harris0", 120, 8.041, 0.522, None, 1.0),
            SeedRow("reduce_1: less warp divergence", "seeds", "harris1", 121, 6.655, 0.630,
                    None, 1.21),
            SeedRow("reduce_2: sequential addressing", "seeds", "harris2", 122, 5.863, 0.715,
                    None, 1.37),
            SeedRow("reduce_3: first add during load", "seeds", "harris3", 123, 3.430, 1.223,
                    None, 2.34),
            SeedRow("reduce_4: unroll last warp", "seeds", "harris4", 124, 2.865, 1.464, None,
                    2.81),
            SeedRow("reduce_5: complete unroll", "seeds", "harris5", 125, 2.397, 1.750, None,
                    3.35),
            SeedRow("reduce_v6: shuffle last warp (table's second reduce_5)", "seeds",
                    "harris5_shfl", 126, 2.426, 1.729, None, 3.32),
        ),
        note="The seed's bandwidth is 2^20 x 4 bytes / time, as ours; its speed-ups are "
             "cumulative over reduce_0."),
    SeedTable(
        "course", "The course's kernels (RTX 3090, 2^26 ints, 512 threads)", _COURSE,
        "NVIDIA RTX 3090 (Nsight Compute; CPU timer incl. host finish)", "int32", 1 << 26, (
            SeedRow("Neighbored (Divergence)", "seeds", "reduceNeighbored", 1383, 2.332,
                    123.56, None, 56.13, {"instructions_M": 612.10, "branch_eff_pct": 68.75}),
            SeedRow("Neighbored (No Divergence)", "seeds", "reduceNeighboredLess", 1384, 1.325,
                    230.84, None, 98.81, {"instructions_M": 241.96, "branch_eff_pct": 98.36}),
            SeedRow("Interleaved", "seeds", "reduceInterleaved", 1385, 1.175, 266.01, None,
                    111.38, {"instructions_M": 205.78, "branch_eff_pct": 98.36}),
            SeedRow("Unroll 2 Blocks", "seeds", "reduceUnrolling2", 1386, 0.683, 471.18, None,
                    191.55, {"instructions_M": 111.28, "branch_eff_pct": 98.36}),
            SeedRow("Unroll 4 Blocks", "seeds", "reduceUnrolling4", 1387, 0.484, 694.13, None,
                    270.30, {"instructions_M": 58.79, "branch_eff_pct": 98.36}),
            SeedRow("Unroll 8 Blocks", "seeds", "reduceUnrolling8", 1388, 0.423, 768.26, None,
                    309.29, {"instructions_M": 34.37, "branch_eff_pct": 98.44}),
            SeedRow("Unroll 8 Blocks + Last Warp", "seeds", "reduceUnrollWarps8", 1389, 0.414,
                    767.86, None, 316.42, {"instructions_M": 22.30, "branch_eff_pct": 100.0}),
            SeedRow("Unroll 8 Blocks + Loop + Last Warp", "seeds", "reduceCompleteUnrollWarps8",
                    1390, 0.412, 767.49, None, 317.52,
                    {"instructions_M": 21.04, "branch_eff_pct": 100.0}),
            SeedRow("Templetized Kernel", "seeds", "reduceCompleteUnroll", 1391, 0.411, 767.56,
                    None, 318.07, {"instructions_M": 18.93, "branch_eff_pct": 100.0}),
            SeedRow("Templetized Kernel + SMEM", "seeds", "reduceCompleteUnrollShared", 1392,
                    0.360, 879.96, None, 363.58,
                    {"instructions_M": 18.04, "branch_eff_pct": 100.0}),
        ),
        note="The seed's GB/s is Nsight Compute's load throughput and its cumulative speed-up "
             "is over a CPU recursion (130.888 ms, line 1382); its times include the host's "
             "final sum."),
    SeedTable(
        "nested", "Nested reduction (RTX 3090, 2^22 ints, 512 threads)", _COURSE,
        "NVIDIA RTX 3090 (CPU timer incl. host finish)", "int32", 1 << 22, (
            SeedRow("Neighbored (Divergence)", "seeds", "reduceNeighbored", 1643, 0.514, None,
                    None, 16.44, {"instructions_M": 38.39}),
            SeedRow("Nested Sync", "nested", "gpuRecursiveReduce", 1644, 109.319, None, None,
                    0.078, {"instructions_M": 1497.24}),
            SeedRow("Nested NoSyn", "nested", "gpuRecursiveReduceNosync", 1645, 42.94, None,
                    None, 0.197, {"instructions_M": 875.15}),
            SeedRow("Nested Fixed", "nested", "gpuRecursiveReduceFixed", 1646, 0.734, None,
                    None, 11.51, {"instructions_M": 138.32}),
        ),
        note="Cumulative speed-up over a CPU recursion (8.448 ms, line 1642). CUDA 12 removed "
             "device-side cudaDeviceSynchronize: 'Nested Sync' runs as a tail launch here.",
        # the experiment's chosen subset of the nested family's block sizes (a test checks it
        # is one): smaller blocks mean more parents, each launching children
        block_sizes=(256, 512, 1024)),
    SeedTable(
        "smem", "Shared vs global memory (16M ints, 256 threads)", _SMEM,
        "unnamed GPU (nsys)", "int32", 1 << 24, (
            SeedRow("reduceGmem", "seeds", "reduceGmem", 442, 0.248, 271.66),
            SeedRow("reduceSmem", "seeds", "reduceSmem", 443, 0.201, 335.18),
            SeedRow("reduceGmemUnroll", "seeds", "reduceGmemUnroll", 444, 0.120, 559.79),
            SeedRow("reduceSmemUnroll", "seeds", "reduceSmemUnroll", 445, 0.097, 692.52),
            SeedRow("reduceSmemDyn (no number published, line 430)", "seeds", "reduceSmemDyn",
                    430, None),
            SeedRow("reduceSmemUnrollDyn (no number published, line 430)", "seeds",
                    "reduceSmemUnrollDyn", 430, None),
        ),
        note="The seed's bandwidth counts bytes read and written (line 436); ours counts "
             "bytes read."),
)


def table_named(key: str) -> SeedTable:
    for t in TABLES:
        if t.key == key:
            return t
    raise KeyError(key)
