"""reducetune's C++ core (private: use the reducetune package)"""

from collections.abc import Mapping, Sequence
from typing import Final

# The measurement protocol's constants (driver/src/bind_protocol.cpp): defined in C++ only.
MIN_SAMPLES: Final[int]  # cold samples per point at least (measure/stopping_rule.hpp)
MAX_NOISE: Final[float]  # a point may stop once its relative standard deviation is below this
WORKLOAD_SEED: Final[int]  # the data seed of a workload that names none (verify/patterns.hpp)
SPACE_SEED: Final[int]  # the seed of a space's samples when none is given (space/space.hpp)


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

def space_size(family: str, dtype: str, op: str, limits: DeviceLimits) -> dict: ...

def check(family: str, dtype: str, op: str, limits: DeviceLimits, params: Mapping[str, int | str], with_launch: bool = True) -> list[tuple[str, str]]:
    """
    The constraints a point fails, as (expression, why) pairs: empty when it is valid.
    """

def valid_points(family: str, dtype: str, op: str, limits: DeviceLimits, with_launch: bool = True) -> list[dict[str, int | str]]:
    """
    Every valid point (variant x launch config when with_launch) as parameter dicts.
    """

def labels(family: str, dtype: str, op: str, params: Mapping[str, int | str]) -> tuple[str, str]:
    """(variant label, launch label) of a point."""

def parse_labels(variant_label: str, launch_label: str) -> dict: ...

def presets(family: str, dtype: str, op: str, limits: DeviceLimits) -> list: ...

def compile_jobs(arch: str = 'sm_90', all: bool = False, sample: int = 500, family: str = '', dtypes: Sequence[str] = [], ops: Sequence[str] = [], seed: int = 32199629485598068, threads: int = 0, batch: int = 0, cached_pass: bool = True) -> dict:
    """
    Compiles presets and a seeded sample (or all valid points); timings and failures.
    """

def compile_points(family: str, dtype: str, op: str, arch: int, points: Sequence[Mapping[str, int | str]]) -> list:
    """
    Compiles points of one space in a batch; failures are data (ok=False, error).
    """

def precompile(variant_labels: Sequence[str], arch: str = 'sm_90', threads: int = 0) -> dict:
    """
    Compiles variants (by label) in parallel into the cache that evaluate() uses: {requested, compiled, cached, failed, failures: {label: error}, seconds, threads}.
    """

def query_device(ordinal: int = 0) -> dict:
    """The device's identity and limits; DeviceError without a GPU."""

def device_limits(ordinal: int = 0) -> DeviceLimits: ...

def evaluate(variant_label: str, launch_label: str, workload: dict, ordinal: int = 0, options: dict = {}) -> dict:
    """
    Compiles (cached), runs, verifies and times one point: a measurement dict (status 'ok') or a failure dict (status 'failed' | 'invalid' | 'wrong', kind, reason).
    """

def evaluate_cub(workload: dict, ordinal: int = 0, options: dict = {}) -> dict: ...

def streaming_ceiling(ordinal: int = 0, bytes: int = 0) -> dict: ...  # 0: 4 GiB or memory/8

class Store:
    def __init__(self, path: str) -> None:
        """
        Opens (creating or migrating) a results file; StoreError for a corrupt, foreign or newer file, which is left untouched.
        """

    def close(self) -> None: ...

    @property
    def path(self) -> str: ...

    def schema_version(self) -> int: ...

    def integrity_check(self) -> str: ...

    def register_device(self, arg: dict, /) -> int: ...

    def find_device(self, arg: str, /) -> object: ...

    def devices(self) -> list: ...

    def register_template(self, arg0: str, arg1: str, /) -> int: ...

    def create_study(self, arg: dict, /) -> int: ...

    def record_measurement(self, arg: dict, /) -> int: ...

    def is_measured(self, arg: dict, /) -> bool: ...

    def record_baseline(self, arg: dict, /) -> int: ...

    def find_baseline(self, arg0: int, arg1: dict, arg2: str, /) -> object: ...

    def best(self, device_id: int, dtype: str, op: str, n: int) -> object: ...

    def history(self, device_id: int, dtype: str, op: str, n: int | None = None) -> list: ...

    def merge_from(self, arg: str, /) -> dict: ...

def export_header(path: str, namespace: str = 'reducetune_dispatch') -> str: ...

def export_json(path: str) -> str: ...

def catalog_best(path: str, device: str, dtype: str, op: str, n: int) -> object: ...

def write_file_atomically(path: str, content: str) -> None: ...
