"""Search strategies as Optuna samplers.

Every strategy sees the same categorical space (each parameter's declared values); invalid
points are told to the study as FAIL without being evaluated (Optuna's constraint-free
approach: sample, check, tell). ``grid`` is exhaustive over the *valid* points only: they are
enqueued in enumeration order, so the invalid part of the product is never visited.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reducetune.errors import InvalidConfiguration

__all__ = ["STRATEGIES", "STRATEGY", "Strategy", "strategy_named", "make_sampler",
           "distributions"]


@dataclass(frozen=True)
class Strategy:
    """A search strategy: how its Optuna sampler is made and what the study needs of it.
    Adding a strategy is adding one entry to STRATEGY; nothing else names strategies."""

    name: str
    sampler: Callable[[Any, int | None], Any]  # (the optuna module, seed) -> sampler
    needs: tuple[str, ...] = ()  # Python packages beyond optuna
    # every unseen valid point enqueued in enumeration order (the sampler only fills in)
    exhaustive: bool = False
    # two objectives, median time and its relative noise, instead of the median alone
    two_objectives: bool = False
    # parameters as the index of their ordered values: the sampler models numbers only
    indexed: bool = False


STRATEGY: dict[str, Strategy] = {s.name: s for s in (
    Strategy("tpe", lambda optuna, seed: optuna.samplers.TPESampler(seed=seed,
                                                                    multivariate=True)),
    Strategy("random", lambda optuna, seed: optuna.samplers.RandomSampler(seed=seed)),
    Strategy("grid", lambda optuna, seed: optuna.samplers.RandomSampler(seed=seed),
             exhaustive=True),
    Strategy("gp", lambda optuna, seed: optuna.samplers.GPSampler(seed=seed),
             needs=("torch", "scipy")),
    Strategy("cmaes", lambda optuna, seed: optuna.samplers.CmaEsSampler(seed=seed),
             needs=("cmaes",), indexed=True),
    Strategy("nsga2", lambda optuna, seed: optuna.samplers.NSGAIISampler(seed=seed),
             two_objectives=True),
)}
STRATEGIES = tuple(STRATEGY)


def strategy_named(name: str) -> Strategy:
    """The strategy of that name; InvalidConfiguration for an unknown one."""
    if name not in STRATEGY:
        raise InvalidConfiguration(
            f"unknown strategy '{name}' (choose one of: {', '.join(STRATEGIES)})")
    return STRATEGY[name]


def _require(module: str, strategy: str) -> None:
    try:
        __import__(module)
    except ImportError as e:
        raise InvalidConfiguration(
            f"strategy '{strategy}' needs the Python package '{module}' (pip install {module})"
        ) from e


def make_sampler(name: str, seed: int | None) -> Any:
    """The strategy's Optuna sampler; InvalidConfiguration for an unknown strategy or a
    missing package it needs."""
    import optuna  # heavy (about 0.5 s): only where a study is used

    # multivariate TPE, GP and the like are "experimental" in Optuna: say it once, here.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    s = strategy_named(name)
    for module in s.needs:
        _require(module, name)
    return s.sampler(optuna, seed)


def distributions(choices: dict[str, list[Any]], strategy: str) -> dict[str, Any]:
    """Categorical per parameter; CMA-ES gets the index of each (ordered) value instead, since
    it only models numbers (block sizes, unrolls and the like are ordered; the proposal turns a
    trial's indexes back into values, tuning/proposal.py)."""
    # heavy (about 0.5 s): only where a study is used
    from optuna.distributions import CategoricalDistribution, IntDistribution

    if STRATEGY[strategy].indexed:
        return {k: IntDistribution(0, len(v) - 1) for k, v in choices.items()}
    return {k: CategoricalDistribution(v) for k, v in choices.items()}

