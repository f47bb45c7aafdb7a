"""Argument types and options that several commands share, and how they are read back."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reducetune import _core, errors
from reducetune._sizes import MAX_POWER, MAX_SIZES, parse_sizes
from reducetune._space import DTYPES, OPS
from reducetune.store.paths import check_output_folder, default_db_path
from reducetune.tuning.shapes import GRIDS, Shape, parse_shapes


# The largest values the consumers of each option accept (checked on the command line, where
# a bad value gets argparse's one-line error, instead of failing deep in numpy, SQLite or C++):
SEED_MAX = 2**32 - 1  # Optuna's samplers seed numpy's RandomState: 32 bits, not C++'s uint64
INT_MAX = 2**31 - 1  # a C int (a CUDA device ordinal); also the bound of every count below
COUNT_MAX = INT_MAX  # evaluations, samples, rows, sampled variants: far above any space
THREADS_MAX = 1024  # threads or processes started at once
DAY_S = 86400.0
# epoll refuses a timeout above 2^31 ms (24.8 days), and precompiling waits --timeout plus
# 0.5 s per variant: a day leaves room for both.
TIMEOUT_MAX_S = DAY_S
RUN_MAX_S = 365 * DAY_S  # --time-limit: only a typo (1e9) is this long
SAMPLE_TIME_MAX_S = 3600.0  # per point: a tuner samples for 0.1 s, a one-off benchmark for 1 s
SEEDS_MAX = 10_000  # each seed is one run per strategy and size
MIN_SAMPLES: int = _core.MIN_SAMPLES  # a measurement's cold samples at least (stopping_rule.hpp)


def seconds(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``2h``, ``100ms``."""
    units = {"ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    _ascii(text, "a duration (90, 90s, 10m, 2h, 100ms)")
    try:
        for unit in sorted(units, key=len, reverse=True):  # "ms" before "s"
            if text.endswith(unit):
                return float(text[: -len(unit)]) * units[unit]
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"'{_short(text)}' is not a duration (90, 90s, 10m, 2h, 100ms)")


def _short(text: str) -> str:
    """Text as messages quote it: a pasted megabyte of digits is cut short."""
    return text if len(text) <= 40 else text[:37] + "..."


def _ascii(text: str, what: str) -> None:
    """Refuses digits other than 0-9: int() and float() read Arabic-Indic or fullwidth digits
    (and other scripts'), which no shell, script or other tool takes for a number."""
    if not text.isascii():
        raise argparse.ArgumentTypeError(
            f"'{_short(text)}' is not {what}: write it with the digits 0-9")


def _whole(text: str) -> float:
    _ascii(text, "an integer")
    try:
        return int(text)
    except ValueError:
        # More digits than int() reads (4300): beyond every bound, and refused as such.
        if re.fullmatch(r"\s*[+-]?[0-9]+\s*", text):
            return -math.inf if text.strip().startswith("-") else math.inf
        raise argparse.ArgumentTypeError(f"'{_short(text)}' is not an integer")


def _real(text: str) -> float:
    _ascii(text, "a number")
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{_short(text)}' is not a number")


def _show_number(v: float) -> str:
    return str(v) if isinstance(v, int) else f"{v:g}"


def show_seconds(v: float) -> str:
    """A duration as the options are written: ``100ms``, ``30s``, ``10m``, ``24h``."""
    if v == 0:
        return "0"
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if v >= size and v % size == 0:
            return f"{v / size:g}{unit}"
    return f"{v:g}s" if v >= 1 else f"{v * 1000:g}ms"


class Ranged:
    """An argparse type for a number in a range: text that is not a number, and a number
    outside the range, get argparse's one-line error naming the range; ``range_text`` is
    appended to the option's help (show_ranges).

    ``defer_below``: values from it up to ``lo`` (and NaN when it is -inf) are returned as
    they are, for a later check with its own message (TuneConfig.validate, whose messages
    scripts and tests already rely on)."""

    def __init__(self, parse: Callable[[str], Any], lo: float, hi: float, *,
                 lo_open: bool = False, hi_open: bool = False, defer_below: float | None = None,
                 show: Callable[[float], str] = _show_number) -> None:
        self.parse, self.lo, self.hi, self.show = parse, lo, hi, show
        self.lo_open, self.hi_open, self.defer_below = lo_open, hi_open, defer_below
        low = f"above {show(lo)}" if lo_open else show(lo)
        high = f"below {show(hi)}" if hi_open else show(hi)
        self.range_text = f"{low} to {high}"

    def __call__(self, text: str) -> Any:
        try:
            v = self.parse(text)
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(f"{e} [range: {self.range_text}]") from None
        if self._deferred(v):
            return v
        if math.isnan(v):
            return self._refuse(text, "is not a finite number")
        if v < self.lo or (self.lo_open and v == self.lo):
            return self._refuse(text, f"must be {'above' if self.lo_open else 'at least'} "
                                      f"{self.show(self.lo)}")
        if v > self.hi or (self.hi_open and v == self.hi):
            return self._refuse(text, f"must be {'below' if self.hi_open else 'at most'} "
                                      f"{self.show(self.hi)}")
        return v

    def _deferred(self, v: float) -> bool:
        if self.defer_below is None:
            return False
        if math.isnan(v):
            return self.defer_below == -math.inf
        return self.defer_below <= v < self.lo or (self.lo_open and v == self.lo)

    def _refuse(self, text: str, rule: str) -> Any:
        raise argparse.ArgumentTypeError(f"'{_short(text)}' {rule} [range: {self.range_text}]")


def integer(lo: int, hi: int, *, defer_below: float | None = None) -> Ranged:
    """A whole number in [lo, hi]."""
    return Ranged(_whole, lo, hi, defer_below=defer_below)


def real(lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False,
         defer_below: float | None = None) -> Ranged:
    """A finite number in [lo, hi] (either end excluded with lo_open / hi_open)."""
    return Ranged(_real, lo, hi, lo_open=lo_open, hi_open=hi_open, defer_below=defer_below)


def duration(lo: float, hi: float, *, lo_open: bool = False,
             defer_below: float | None = None) -> Ranged:
    """Seconds in [lo, hi], written ``90``, ``90s``, ``10m``, ``2h`` or ``100ms``."""
    return Ranged(seconds, lo, hi, lo_open=lo_open, defer_below=defer_below, show=show_seconds)


positive_int = integer(1, COUNT_MAX)


class SizesText:
    """The type of ``--sizes`` and ``--n``: the text as given, for the command's parse_sizes,
    whose refusals (the same limits) take the CLI's usual one-line error with exit status 2,
    as scripts expect. Here for the range its help shows."""

    range_text = f"1 to 2^{MAX_POWER}, at most {MAX_SIZES} sizes"

    def __call__(self, text: str) -> str:
        return text


sizes_text = SizesText()


def show_ranges(parser: argparse.ArgumentParser) -> None:
    """Appends ``[range: ...]`` to the help of every option whose type has a range, in this
    parser and every subcommand's, so no help text states a range by hand."""
    for action in parser._actions:
        text = getattr(action.type, "range_text", None)
        if text and "[range:" not in (action.help or ""):
            action.help = f"{action.help} [range: {text}]" if action.help else f"[range: {text}]"
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                show_ranges(sub)


def one_size(text: str | None, option: str = "--n") -> int | None:
    """The one size of an option that takes one (None when not given): a list, a range or an
    empty text is refused instead of answering for its first size only."""
    if text is None:
        return None
    sizes = parse_sizes(text) if text.strip() else []
    if len(sizes) != 1:
        raise errors.InvalidConfiguration(
            f"{option} '{_short(text)}' is not one size: {option} takes one (1048576 or 2^20)")
    return sizes[0]


# The names a database file goes by (an .xz recording included), refused as a report folder.
_DB_SUFFIXES = (".db", ".db3", ".sqlite", ".sqlite3", ".xz")


def _reads_text(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """Marks an argparse type that reads names, not a number (show_ranges and the test that
    every numeric option shows its range leave it alone)."""
    parse.reads_text = True  # type: ignore[attr-defined]
    return parse


@_reads_text
def out_folder(text: str) -> Path:
    """The type of an experiment's ``--out``: an empty name is refused (Path("") is the
    current folder, where the report would land among whatever is there)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "is empty: name the folder for the report (for example --out reports/harris)")
    return Path(text)


def check_report_folder(folder: Path) -> None:
    """Refuses, before any work, an experiment's --out that is not a folder it may write
    (check_output_folder), or that is named like a database file (``new.db``: a typo for --db
    or --replay) and does not exist yet as a folder."""
    check_output_folder(folder, "--out")
    if folder.name.lower().endswith(_DB_SUFFIXES) and not folder.is_dir():
        raise errors.InvalidConfiguration(
            f"--out {folder} is named like a database; --out is the folder the report goes "
            "into (for example --out reports/harris): name a folder")


def name_list(text: str, known: tuple[str, ...], option: str) -> list[str]:
    """A comma-separated list of names from ``known`` (at least one; duplicates kept once, in
    the order given); InvalidConfiguration names the option and the choices."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise errors.InvalidConfiguration(
            f"{option} '{_short(text)}' names nothing: choose from {', '.join(known)}")
    for t in items:
        if t not in known:
            raise errors.InvalidConfiguration(
                f"{option}: unknown '{_short(t)}' (choose from: {', '.join(known)})")
    return list(dict.fromkeys(items))


def integer_list(text: str, lo: int, hi: int, option: str) -> list[int]:
    """A comma-separated list of whole numbers in [lo, hi] written with the digits 0-9 (at
    least one; duplicates kept once, in the order given); InvalidConfiguration otherwise."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise errors.InvalidConfiguration(
            f"{option} '{_short(text)}' names no number: write for example {lo},{hi}")
    for t in items:
        if not re.fullmatch(r"[0-9]{1,10}", t) or not lo <= int(t) <= hi:
            raise errors.InvalidConfiguration(
                f"{option}: '{_short(t)}' is not a whole number from {lo} to {hi} (digits 0-9)")
    return list(dict.fromkeys(int(t) for t in items))


@_reads_text
def cxx_namespace(text: str) -> str:
    """The type of ``export header --namespace``: asked of the exporter's own rule
    (db/reducetune/db/cxx_names.hpp: ``name`` or ``outer::inner``, no keyword, nothing reserved
    to the compiler, not ``std``), before any file is touched."""
    why = _core.namespace_problem(text)
    if why:
        raise argparse.ArgumentTypeError(f"{why}; write for example my_app::dispatch")
    return text


class Once(argparse.Action):
    """An option given at most once: argparse's default keeps the last of two values and
    silently drops the first (``--replay A --replay B`` would replay B alone)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        given = namespace.__dict__.setdefault("_given_once", set())
        if self.dest in given:
            parser.error(f"{option_string} is given twice: give it once")
        given.add(self.dest)
        setattr(namespace, self.dest, values)


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", type=Path, default=None,
                   help=f"results database (default: {default_db_path()})")


def db_path(args: argparse.Namespace) -> Path:
    return Path(args.db) if args.db is not None else default_db_path()


def add_allow_flagged(p: argparse.ArgumentParser, text: str | None = None) -> None:
    p.add_argument("--allow-flagged", action="store_true", help=text or (
        "also consider measured points with a value the family flags (e.g. "
        "warp=volatile_unsafe, racy by construction); default: left out"))


def add_nondeterministic(p: argparse.ArgumentParser, text: str | None = None) -> None:
    p.add_argument("--nondeterministic", action="store_true", help=text or (
        "also consider points whose result changes from run to run (a float sum or product "
        "finished by atomics: the blocks' partials are added in arrival order); default: "
        "deterministic points only, as CUB's DeviceReduce is"))


def add_workload(p: argparse.ArgumentParser, sizes: bool = True, lists: bool = False) -> None:
    """--dtype, --op (with lists: comma-separated lists or ``all``, see workload_pairs) and
    --sizes."""
    more = ", a comma-separated list of them, or all" if lists else ""
    p.add_argument("--dtype", default="float32", help=f"element type: {', '.join(DTYPES)}{more}")
    p.add_argument("--op", default="sum", help=f"operator: {', '.join(OPS)}{more}")
    if sizes:
        p.add_argument("--sizes", nargs="+", default=["2^20"], type=sizes_text,
                       help="input sizes: 1048576, 2^20, 2^10..2^30, 2^10..2^30:2")


def add_shapes(p: argparse.ArgumentParser) -> None:
    """--shapes: an axis family's units (tuning/shapes.py)."""
    p.add_argument("--shapes", nargs="+", default=None, metavar="OUTERxRxINNER|GRID",
                   help="shapes (outer, r, inner) whose middle axis r an axis family reduces: "
                        f"4096x64x1 (rows), 1x64x4096 (columns), 2^k allowed, or a grid: "
                        f"{', '.join(GRIDS)} (with --family axis; default: default, "
                        f"{len(GRIDS['default'])} shapes of 2^24 elements)")


def one_shape(text: str | None, option: str = "--shape") -> Shape | None:
    """The one shape of an option that takes one (None when not given)."""
    if text is None:
        return None
    shapes = parse_shapes(text)
    if len(shapes) != 1:
        raise errors.InvalidConfiguration(
            f"{option} '{_short(text)}' is not one shape: {option} takes one (4096x64x1)")
    return shapes[0]


def check_workload(args: argparse.Namespace) -> None:
    if args.dtype not in DTYPES:
        raise errors.InvalidConfiguration(
            f"unknown element type '{args.dtype}' (choose one of: {', '.join(DTYPES)})")
    if args.op not in OPS:
        raise errors.InvalidConfiguration(
            f"unknown operator '{args.op}' (choose one of: {', '.join(OPS)})")


def _listed(text: str, known: tuple[str, ...], what: str) -> list[str]:
    items = list(known) if text.strip() == "all" else [
        t.strip() for t in text.split(",") if t.strip()]
    for t in items:
        if t not in known:
            raise errors.InvalidConfiguration(
                f"unknown {what} '{t}' (choose from: {', '.join(known)}, or all)")
    if not items:
        raise errors.InvalidConfiguration(f"no {what} given (choose from: {', '.join(known)})")
    return list(dict.fromkeys(items))


def workload_pairs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """Every (dtype, op) of ``--dtype A,B --op X,Y`` (or ``all``), dtype-major."""
    dtypes = _listed(args.dtype, DTYPES, "element type")
    ops = _listed(args.op, OPS, "operator")
    return [(d, o) for d in dtypes for o in ops]


def restrictions(items: list[str]) -> dict[str, list[str]]:
    """``--restrict NAME=V1,V2`` items (repeatable) as {name: [values]}."""
    out: dict[str, list[str]] = {}
    for item in items:
        name, sep, values = item.partition("=")
        if not sep or not name or not values:
            raise errors.InvalidConfiguration(
                f"--restrict '{item}' is not NAME=V1,V2 (for example block_size=128,256)")
        out.setdefault(name.strip(), []).extend(v.strip() for v in values.split(",") if v.strip())
    return out
