"""Search strategies as Optuna samplers.

Every strategy sees the same categorical space (each parameter's declared values); invalid
points are told to the study as FAIL without being evaluated (Optuna's constraint-free
approach: sample, check, tell). ``grid`` is exhaustive over the *valid* points only: they are
enqueued in enumeration order, so the invalid part of the product is never visited.
"""

from __future__ import annotations

import warnings
from typing import Any

from reducetune.errors import InvalidConfiguration

__all__ = ["STRATEGIES", "make_sampler", "distributions"]

STRATEGIES = ("tpe", "random", "grid", "gp", "cmaes", "nsga2")


def _require(module: str, strategy: str) -> None:
    try:
        __import__(module)
    except ImportError as e:
        raise InvalidConfiguration(
            f"strategy '{strategy}' needs the Python package '{module}' (pip install {module})"
        ) from e


def make_sampler(strategy: str, seed: int | None) -> Any:
    import optuna  # heavy (about 0.5 s): only where a study is used

    # multivariate TPE, GP and the like are "experimental" in Optuna: say it once, here.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)

    if strategy not in STRATEGIES:
        raise InvalidConfiguration(
            f"unknown strategy '{strategy}' (choose one of: {', '.join(STRATEGIES)})"
        )
    if strategy == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    if strategy in ("random", "grid"):
        return optuna.samplers.RandomSampler(seed=seed)
    if strategy == "gp":
        _require("torch", strategy)
        _require("scipy", strategy)
        return optuna.samplers.GPSampler(seed=seed)
    if strategy == "cmaes":
        _require("cmaes", strategy)
        return optuna.samplers.CmaEsSampler(seed=seed)
    return optuna.samplers.NSGAIISampler(seed=seed)


def distributions(choices: dict[str, list[Any]], strategy: str) -> dict[str, Any]:
    """Categorical per parameter; CMA-ES gets the index of each (ordered) value instead, since
    it only models numbers (block sizes, unrolls and the like are ordered)."""
    # heavy (about 0.5 s): only where a study is used
    from optuna.distributions import CategoricalDistribution, IntDistribution

    if strategy == "cmaes":
        return {k: IntDistribution(0, len(v) - 1) for k, v in choices.items()}
    return {k: CategoricalDistribution(v) for k, v in choices.items()}


def decode(params: dict[str, Any], choices: dict[str, list[Any]], strategy: str) -> dict[str, Any]:
    if strategy == "cmaes":
        return {k: choices[k][int(i)] for k, i in params.items()}
    return dict(params)


def encode(params: dict[str, Any], choices: dict[str, list[Any]], strategy: str) -> dict[str, Any]:
    if strategy == "cmaes":
        return {k: choices[k].index(v) for k, v in params.items()}
    return dict(params)
