"""reducetune's C++ core (private: use the reducetune package)"""

from collections.abc import Mapping, Sequence
from typing import Annotated

from numpy.typing import NDArray


MIN_SAMPLES: int = 10

MAX_NOISE: float = 0.01

OUTPACED_MIN_SAMPLES: int = 3

WORKLOAD_SEED: int = 24301

SPACE_SEED: int = 32199629485598068

def summarize(samples: Sequence[float]) -> dict:
    """
    Count, median, min, max, mean, stddev, rel_stddev and the median's 95 % interval (median_low, median_high, median_rel_halfwidth) of samples; InvalidConfiguration for none, or a negative or non-finite one.
    """

class DeviceLimits:
    def __init__(self) -> None: ...

    @property
    def arch(self) -> int: ...

    @arch.setter
    def arch(self, arg: int, /) -> None: ...

    @property
    def max_threads_per_block(self) -> int: ...

    @max_threads_per_block.setter
    def max_threads_per_block(self, arg: int, /) -> None: ...

    @property
    def max_shared_per_block(self) -> int: ...

    @max_shared_per_block.setter
    def max_shared_per_block(self, arg: int, /) -> None: ...

    @property
    def max_shared_per_block_optin(self) -> int: ...

    @max_shared_per_block_optin.setter
    def max_shared_per_block_optin(self, arg: int, /) -> None: ...

    @property
    def sm_count(self) -> int: ...

    @sm_count.setter
    def sm_count(self, arg: int, /) -> None: ...

    @property
    def warp_size(self) -> int: ...

    @warp_size.setter
    def warp_size(self, arg: int, /) -> None: ...

    def __repr__(self) -> str: ...

def limits_for_arch(arch: str) -> DeviceLimits:
    """Device limits from the architecture table ("sm_90", "90" or "9.0")."""

def known_archs() -> list[str]: ...

def set_templates(directory: str) -> None:
    """
    Reads families from this folder instead ("": REDUCETUNE_TEMPLATE_DIR or embedded).
    """

def templates_origin() -> str: ...

def families() -> list: ...

def family(name: str) -> dict: ...

def template_hash(family: str) -> str: ...

def dtypes() -> list[str]:
    """Every element type's name, in the core's order (space/element.hpp)."""

def operators() -> list[str]:
    """Every operator's name, in the core's order (space/element.hpp)."""

def element_bytes(dtype: str) -> int:
    """Bytes of one element of the type (space/element.hpp)."""

class Point:
    """One tuning point (variant and launch config) of a Space."""

    @property
    def family(self) -> str: ...

    @property
    def dtype(self) -> str: ...

    @property
    def op(self) -> str: ...

    @property
    def variant_label(self) -> str: ...

    @property
    def launch_label(self) -> str: ...

    @property
    def labels(self) -> tuple[str, str]: ...

    @property
    def params(self) -> dict[str, int | str]: ...

    @property
    def compile_params(self) -> dict[str, int | str]: ...

    @property
    def launch_params(self) -> dict[str, int | str]: ...

    @property
    def flags(self) -> list[tuple[str, str, str]]:
        """The flagged values as (parameter, value, why)."""

    @property
    def flagged(self) -> bool: ...

    @property
    def determinism(self) -> str: ...

    @property
    def deterministic(self) -> bool: ...

    def grid(self, n: int) -> int:
        """
        Blocks of the first pass at n: the family's grid expression, on the Space's device.
        """

    def to_dict(self) -> dict:
        """
        {family, dtype, op, params}: the point as plain values (for JSON; evaluate() and precompile() take it as they take the Point).
        """

    def __eq__(self, arg: Point, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

class Space:
    """
    The search space of one family for one element type, operator and device, optionally restricted to some values of some parameters.
    """

    def __init__(self, family: str, dtype: str, op: str, limits: DeviceLimits, restrict: Mapping[str, Sequence[int | str]] | None = None) -> None: ...

    @property
    def family(self) -> str: ...

    @property
    def dtype(self) -> str: ...

    @property
    def op(self) -> str: ...

    @property
    def limits(self) -> DeviceLimits: ...

    @property
    def restrict(self) -> dict[str, list[int | str]]: ...

    def choices(self) -> dict:
        """Every parameter's proposable values, declaration order."""

    def proposable(self, allow_flagged: bool = False, nondeterministic: bool = False) -> dict:
        """
        choices() less the values no valid point of the selection takes (space.hpp).
        """

    def selected(self, point: Point, allow_flagged: bool = False, nondeterministic: bool = False) -> bool:
        """Whether the selection accepts the point's flags and determinism."""

    def base(self, name: str, allow_flagged: bool = False, nondeterministic: bool = False) -> Point | None:
        """
        The starting point (search_space::base): the preset, or the family's first valid and selected one where the named preset is invalid here; None when none fits.
        """

    def sizes(self) -> dict: ...

    def point(self, params: Mapping[str, int | str]) -> Point:
        """The point of these parameters (others at their default)."""

    def parse(self, variant_label: str, launch_label: str) -> Point: ...

    def check(self, point: Point) -> list[tuple[str, str]]:
        """The constraints the point fails as (expression, why); empty: valid."""

    def points(self) -> list[Point]:
        """Every valid point, in enumeration order."""

    def presets(self) -> list: ...

class Problem:
    """
    What is reduced: element type, operator and shape (outer, r, inner), the middle axis reduced; the whole array of n elements is (1, n, 1).
    """

    def __init__(self, dtype: str, op: str, shape: tuple[int, int, int]) -> None: ...

    @staticmethod
    def whole_array(dtype: str, op: str, n: int) -> Problem: ...

    @property
    def dtype(self) -> str: ...

    @property
    def op(self) -> str: ...

    @property
    def shape(self) -> tuple[int, int, int]: ...

    @property
    def is_whole_array(self) -> bool: ...

    @property
    def elements(self) -> int:
        """outer x r x inner: elements read."""

    @property
    def outputs(self) -> int:
        """outer x inner: results written."""

    @property
    def bytes_read_and_written(self) -> int:
        """Bytes an axis reduction moves: elements read and outputs written."""

    @property
    def label(self) -> str:
        """'float32.sum.(1,1048576,1)', for people (never parsed back)."""

    def __eq__(self, arg: Problem, /) -> bool: ...

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

def compile_jobs(arch: str = 'sm_90', all: bool = False, sample: int = 500, family: str = '', dtypes: Sequence[str] = [], ops: Sequence[str] = [], seed: int = 32199629485598068, threads: int = 0, batch: int = 0, cached_pass: bool = True) -> dict:
    """
    Compiles presets and a seeded sample (or all valid points); timings and failures.
    """

def compile_points(family: str, dtype: str, op: str, arch: int, points: Sequence[Mapping[str, int | str]]) -> list:
    """
    Compiles points of one space in a batch; failures are data (ok=False, error).
    """

def precompile(points: list, arch: str = 'sm_90', threads: int = 0, shared_dir: str = '') -> dict:
    """
    Compiles the points' variants (Points or Point.to_dict()s) in parallel into the cache that evaluate() uses: {requested, compiled, cached, failed, failures: {variant label: error}, seconds, threads}. shared_dir: the folder the GPU workers of one run share their programs through (loaded there, stored there).
    """

def compile_ahead(points: list | None, arch: str = 'sm_90', threads: int = 0, workers: int = 1, shared_dir: str = '') -> dict:
    """
    Queues the points' variants (Points or Point.to_dict()s) for background threads that compile them into the cache evaluate() uses, replacing what still waits, and returns at once: {queued, waiting, compiled, skipped, loaded, failed, dropped, busy_s, threads} so far (loaded: another GPU worker's, from shared_dir). An empty list drops what waits; None only reports. threads (0: one per hardware thread but one, or with workers GPU workers on the host each its share, at most 16) counts at the first call only. shared_dir: the folder the GPU workers of one run share their programs through.
    """

def variant_points(space: Space, allow_flagged: bool = False, nondeterministic: bool = False) -> list[Point]:
    """
    One point per distinct variant of the space's selected valid points, in enumeration order: what precompile() and compile_ahead() need of a space.
    """

def query_device(ordinal: int = 0) -> dict:
    """The device's identity and limits; DeviceError without a GPU."""

def device_limits(ordinal: int = 0) -> DeviceLimits: ...

def evaluate(point: Point | dict, problem: Problem | dict, data: dict = {}, ordinal: int = 0, options: dict = {}) -> dict:
    """
    Compiles (cached), runs, verifies and times one point on one problem (data: its pattern, seed and offset_elements): a measurement dict (status 'ok') or a failure dict (status 'failed' | 'invalid' | 'wrong', kind, reason).
    """

def evaluate_cub(workload: dict, ordinal: int = 0, options: dict = {}) -> dict: ...

def streaming_ceiling(ordinal: int = 0, bytes: int = 0) -> dict:
    """
    Measures the streaming ceiling of device `ordinal` over `bytes` (0: 4 GiB, or an eighth of the device's memory if less), in the tuner's protocol (cold L2, gated): every read shape timed. A dict: bytes_per_s and samples_s of the fastest shape, its name (shape), bytes, and shapes (each shape's name and bytes_per_s, in read_shapes() order).
    """

def streaming_read(data_ptr: int, bytes: int, stream: int, shape: str, ordinal: int = 0) -> None:
    """
    Launches the read-only streaming kernel once over `bytes` (a multiple of 16) at `data_ptr` (16-byte aligned) on `stream`, in the read shape named `shape` (streaming_ceiling's 'shape'), as an application launches a kernel: no gate, no L2 flush, no synchronisation, nothing allocated after the device's first read. InvalidConfiguration for an unknown shape, a size or a pointer it cannot read.
    """

def app_time_streaming_read(data_ptr: int, bytes: int, stream: int, shape: str, ordinal: int = 0) -> tuple[float, float]:
    """
    streaming_read as one lone call timed in C++ (two events around it, the stream synchronised after): (seconds between the events, the call's host seconds).
    """

def streaming_mixed(data_ptr: int, bytes: int, out_ptr: int, out_bytes: int, stream: int, ordinal: int = 0) -> None:
    """
    Launches the mixed stream once: the streaming read of `bytes` (a multiple of 16) at `data_ptr` (16-byte aligned) that also writes `out_bytes` (rounded down to 4, at most `bytes`) at `out_ptr` (4-byte aligned), a share per tile along the input, as a reduction writes its outputs; a plain stream with a reduction's reads and writes (the axis benchmark's reference beside its ceilings). InvalidConfiguration for sizes or pointers it cannot take.
    """

def app_time_streaming_mixed(data_ptr: int, bytes: int, out_ptr: int, out_bytes: int, stream: int, ordinal: int = 0) -> tuple[float, float]:
    """
    streaming_mixed as one lone call timed in C++ (two events around it, the stream synchronised after): (seconds between the events, the call's host seconds).
    """

class Store:
    def __init__(self, path: str, read_only: bool = False) -> None:
        """
        Opens (creating, or migrating after keeping a copy) a results file; read_only: never writes it (an older file is migrated in memory). StoreError for a corrupt, foreign or newer file, which is left untouched.
        """

    def close(self) -> None: ...

    @property
    def migration(self) -> object:
        """{from_version, to_version, backup} when opening migrated the file."""

    @property
    def path(self) -> str: ...

    def schema_version(self) -> int: ...

    def integrity_check(self) -> str: ...

    def register_device(self, arg: dict, /) -> int: ...

    def find_device(self, arg: str, /) -> object: ...

    def devices(self) -> list: ...

    def register_template(self, arg0: str, arg1: str, /) -> int: ...

    def create_study(self, arg: dict, /) -> int: ...

    def record_measurement(self, point: Point, row: dict) -> int:
        """
        Records one measurement of a point (row: device_id, the workload, template_hash, driver/toolkit versions, study_id, samples_s, status, reason, gbps, ...).
        """

    def find_measurement(self, key: dict) -> object:
        """The row measured in exactly this context, or None."""

    def is_measured(self, arg: dict, /) -> bool: ...

    def record_baseline(self, arg: dict, /) -> int: ...

    def find_baseline(self, arg0: int, arg1: dict, arg2: str, /) -> object: ...

    def best(self, device_id: int, dtype: str, op: str, n: int, allow_flagged: bool = False, nondeterministic: bool = False) -> object: ...

    def best_for(self, device_id: int, problem: Problem, allow_flagged: bool = False, nondeterministic: bool = False) -> object:
        """
        best for a Problem: the whole array as best; another shape at the measured shape that answers it (bucket_shape; db/shape_rule.hpp: rows and columns apart).
        """

    def history(self, device_id: int, dtype: str, op: str, n: int | None = None, shape: tuple[int, int, int] | None = None) -> list:
        """
        Every measurement, of one size n or one shape (outer, r, inner) when given (shape wins).
        """

    def merge_from(self, arg: str, /) -> dict: ...

def check_file(path: str) -> dict:
    """The file's schema version and integrity, read without writing it."""

def export_header(path: str, namespace: str = 'reducetune_dispatch', allow_flagged: bool = False, nondeterministic: bool = False) -> str: ...

def export_json(path: str, allow_flagged: bool = False, nondeterministic: bool = False) -> str: ...

def catalog_best(path: str, device: str, dtype: str, op: str, n: int, allow_flagged: bool = False, nondeterministic: bool = False) -> object:
    """
    The export's rule (export json) for the measured size nearest to n, or None.
    """

def catalog_best_shape(path: str, device: str, dtype: str, op: str, outer: int, r: int, inner: int, allow_flagged: bool = False, nondeterministic: bool = False) -> object:
    """
    best for a shape as the runtime answers it: the calibrated pick of the tuned shape that answers it (db/axis_picks.hpp axis_best), as Store.best_for's dict, or None.
    """

def device_model_key(device: dict) -> str:
    """The text naming a device's model (records.hpp, model_fields)."""

def write_file_atomically(path: str, content: str) -> None: ...

class Reducer:
    def __init__(self, dtype: str, op: str, database: str | None = None, table: str | None = None, nondeterministic: bool = False, allow_flagged: bool = False, cache_dir: str | None = None, log_fallbacks: bool = True, extra_launch_s: float | None = None, axis_table: Sequence[tuple[int, int, int, str, str]] = [], axis_determinism: str = 'run_to_run') -> None: ...

    @staticmethod
    def for_point(point: Point, cache_dir: str | None = None) -> Reducer:
        """
        One point at every size, of its type and operator (reducer.hpp, for_point): what calibrate times.
        """

    def reduce(self, data_ptr: int, n: int, out_ptr: int, stream: int = 0, device: int = -1) -> None: ...

    def choice(self, n: int, device: int = -1) -> dict: ...

    def fallbacks(self) -> list[str]: ...

    @property
    def dtype(self) -> str: ...

    @property
    def op(self) -> str: ...

    def reduce_axis(self, data_ptr: int, outer: int, r: int, inner: int, out_ptr: int, stream: int = 0, device: int = -1) -> None: ...

    def axis_choice(self, outer: int, r: int, inner: int, device: int = -1) -> dict: ...

def array_info(array: Annotated[NDArray, dict(writable=False)]) -> tuple: ...

def axis_rule(outer: int, r: int, inner: int, determinism: str = 'run_to_run', dtype: str = 'float32') -> tuple:
    """
    The axis call's built-in rule (runtime/axis_dispatch.hpp): (preset, why); determinism run_to_run or batch_invariant (chosen from r and inner alone); the element type picks 16-byte loads for short rows of the 2-byte types.
    """

def axis_levels() -> list[str]:
    """
    The axis call's determinism levels, the default first (runtime/axis_dispatch.hpp).
    """

def axis_bucket(outer: int, r: int, inner: int) -> tuple:
    """
    The bucket an axis table entry answers: (rows, round(log2 r), round(log2 outputs)).
    """

def time_in_rounds(reducers: Sequence[Reducer], dtype: str, n: int, orders: Sequence[Sequence[int]], device: int = 0) -> list[float]:
    """
    The median lone whole-array call of each reducer on n elements, in rounds: one per entry of `orders`, each a permutation of the reducers' indices.
    """

def application_candidates(db: str, dtype: str, op: str, uuid: str, nondeterministic: bool = False, allow_flagged: bool = False) -> dict: ...

def measured_pick(costs: Sequence[tuple[float, float]]) -> object:
    """
    [(application_s, median_s)] -> the index of the pick among them (within application_tie of the fastest lone call, the least replayed median), None when no application_s is above 0.
    """

def record_application_times(db: str, rows: Sequence[tuple[int, float, int]]) -> None: ...

def time_axis_in_rounds(reducers: Sequence[Reducer], dtype: str, outer: int, r: int, inner: int, orders: Sequence[Sequence[int]], device: int = 0) -> list[float]:
    """
    The median lone axis call (reduce_axis) of each reducer on the shape, in rounds: one per entry of `orders`, each a permutation of the reducers' indices.
    """

def axis_application_candidates(db: str, dtype: str, op: str, uuid: str, nondeterministic: bool = False, allow_flagged: bool = False) -> dict:
    """
    (outer, r, inner) -> that tuned shape's calibration candidates and picks.
    """

def app_time_reducer(reducer: Reducer, data_ptr: int, n: int, out_ptr: int, samples: int, stream: int = 0) -> list[float]: ...

def app_time_axis_call(reducer: Reducer, data_ptr: int, outer: int, r: int, inner: int, out_ptr: int, stream: int = 0, device: int = -1) -> tuple[float, float]: ...

def app_time_memcpy(dst_ptr: int, src_ptr: int, bytes: int, stream: int = 0, device: int = -1) -> tuple[float, float]: ...

def app_time_cub(dtype: str, op: str, data_ptr: int, n: int, out_ptr: int, samples: int, stream: int = 0) -> list[float]: ...

def namespace_problem(namespace: str) -> str:
    """
    Why the text cannot name an exported header's C++ namespace ('' when it can).
    """
