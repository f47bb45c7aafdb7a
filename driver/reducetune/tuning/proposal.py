"""Where a study's next point comes from: the strategy's Optuna sampler, with a queue in front
of it (the base preset first; for grid, every unseen valid point in enumeration order; after
STALL_ESCAPE trials without a new point, a random unseen one). Each trial's parameters become
one Point (``space.point``, the C++ space's own); what is valid, flagged or already seen is
decided on Points."""

from __future__ import annotations

import random
from typing import Any

from reducetune._space import Point, Space
from reducetune.evaluate._gpu_share import compile_share
from reducetune.store.study_share import StudyShare
from reducetune.tuning.config import TuneConfig, study_name
from reducetune.tuning.grid_walk import GridWalk, grid_start
from reducetune.tuning.mirror import MirroredStorage
from reducetune.tuning.samplers import STRATEGY, distributions, make_sampler
from reducetune.tuning.timing import timed, timed_lock, timed_storage
from reducetune.tuning.warm_start import warm_counts, warm_points

__all__ = ["STALL_ESCAPE", "STALL_LIMIT", "Proposal", "open_study"]

# Trials in a row that bring no new point before a study is declared stuck (a sampler that
# keeps proposing points it has already seen, or invalid ones).
STALL_LIMIT = 2000
# After this many trials in a row without a new point, the next trial is a random unseen valid
# point instead of the sampler's proposal. Model-based samplers (gp above all) otherwise keep
# proposing the same invalid or already measured point: a failed trial is invisible to their
# model, so nothing changes their mind, and each ask costs more as trials pile up.
STALL_ESCAPE = 10


def open_study(config: TuneConfig, n: int, device_uuid: str, storage: Any) -> Any:
    """The size's Optuna study, resumed when ``storage`` already holds one of its name (a
    MirroredStorage: in its journal, taking the results file's copy when the journal lacks it;
    tuning/mirror.py)."""
    import optuna  # heavy (about 0.5 s): only where a study is used

    multi = STRATEGY[config.strategy].two_objectives  # median time and its noise
    mirrored = storage if isinstance(storage, MirroredStorage) else None
    study = optuna.create_study(
        study_name=study_name(config, n, device_uuid),
        storage=timed_storage(mirrored.journal if mirrored else storage),
        sampler=make_sampler(config.strategy, config.seed), load_if_exists=True,
        directions=["minimize", "minimize"] if multi else ["minimize"])
    if mirrored:  # the journal's study joined to the results file's copy (tuning/mirror.py)
        mirrored.attach(study)
    # where the time goes (tuning/timing.py): Optuna's cache in front of an RDB storage too,
    # and ask/tell's own time (the sampler) apart from their storage calls
    timed_storage(study._storage)
    for name in ("ask", "tell", "enqueue_trial", "add_trial"):
        setattr(study, name, timed("sampler", getattr(study, name)))
    return study


class Proposal:
    """The points a study is asked to try, and which of them it has seen."""

    def __init__(self, study: Any, space: Space, config: TuneConfig) -> None:
        self.study = study
        self.space = space
        self.config = config
        # Only values some selected valid point takes: nothing proposed is invalid for the
        # workload, flagged or nondeterministic unless the run admits those (space.hpp).
        self.choices = space.proposable(config.allow_flagged, config.nondeterministic)
        self.dists = distributions(self.choices, config.strategy)
        self.seen: set[Point] = set()
        # other processes running this study: their points join seen (store/study_share.py)
        self.share = StudyShare(study, space.parse, self.eligible, self.seen)
        setattr(self.share, "_lock", timed_lock(self.share._lock))  # waits: lock_wait
        self.stall = 0  # trials in a row without a new point
        self.mirrored: MirroredStorage | None = None  # the file's copy of a journal's study
        self.escapes = 0
        self._grid: GridWalk | None = None

    def eligible(self, p: Point) -> bool:
        return self.space.selected(p, self.config.allow_flagged, self.config.nondeterministic)

    def resume(self) -> list[Point]:
        """The points of the study's finished trials (a resumed study keeps its budget),
        without the flagged ones unless allowed: those are not this run's points."""
        for t in self.study.trials:
            p = self.share.point_of(t.user_attrs) if t.state.is_finished() else None
            if p is not None and self.eligible(p):
                self.seen.add(p)
        return list(self.seen)

    def start(self, store: Any = None, n: int = 0, device_uuid: str = "") -> dict[str, int]:
        """The queue's first entries: grid's every unseen point, else (only in a new study)
        other devices' bests in ``store`` for this n, or the priors table's
        (tuning/warm_start.py; not for grid, which measures every point in its order anyway),
        then the base preset (``Space.base``). Returns the warm-start points enqueued per
        device name."""
        if STRATEGY[self.config.strategy].exhaustive:
            unseen = self._unseen()  # workers of one study start apart (tuning/grid_walk.py)
            self._grid = GridWalk(unseen, grid_start(unseen, compile_share(),
                                                     self.config.walk_apart))
        elif not self.study.trials:
            base = self.space.base(self.config.base_preset, self.config.allow_flagged,
                                   self.config.nondeterministic)
            first = [base] if base is not None else []
            warm = warm_points(store, self.space, self.config, n, device_uuid)
            for p in dict.fromkeys([w.point for w in warm] + first):  # warm_start.py: why
                self._enqueue(p)
            return warm_counts(warm)
        return {}

    def _unseen(self) -> list[Point]:
        return [p for p in self.space.points() if p not in self.seen and self.eligible(p)]

    def _enqueue(self, p: Point) -> None:
        self.study.add_trial(self._waiting(self._encode(p.params)))

    def _next(self, p: Point) -> None:
        """The next trial tries p: created by the next ``ask`` where the study's share allows
        (one write, store/study_share.py: create_next), else enqueued."""
        template = self._waiting(self._encode(p.params))
        if not self.share.create_next(template):
            self.study.add_trial(template)

    def _waiting(self, params: dict[str, Any]) -> Any:
        """``study.enqueue_trial(params)``'s waiting trial carrying its parameters already
        (those ``ask`` draws: ``self.dists``), so that ``ask``'s ``Trial._suggest`` finds each
        in the trial and writes none: a storage write per parameter (8 of a grid point's 17
        on an H200, issue 25) becomes part of the trial's one ``create_new_trial``. The trial
        ends with the same parameters, and keeps Optuna's ``fixed_params`` as before."""
        from optuna.trial import TrialState, create_trial  # heavy: only where a study is used

        known = {k: d for k, d in self.dists.items() if k in params and _holds(d, params[k])}
        return create_trial(state=TrialState.WAITING, params={k: params[k] for k in known},
                            distributions=known, system_attrs={"fixed_params": params})

    def prepare(self) -> str:
        """Queues what the next trial tries, or says why there is nothing left to try
        (``exhausted``, ``stalled``)."""
        if self._grid is not None:
            # not measured, nor being measured, by another worker of the study
            p = self._grid.next(self.share.busy)
            if p is None:
                return "exhausted"
            self._next(p)
        elif self.stall >= STALL_LIMIT:
            left = sum(1 for p in self.space.points() if self.eligible(p))
            return "exhausted" if len(self.seen) >= left else "stalled"
        elif self.stall and self.stall % STALL_ESCAPE == 0:
            unseen = self._unseen()
            if not unseen:
                return "exhausted"
            # Seeded by the study's seed and its point count: a replayed study is deterministic.
            self._next(random.Random(f"{self.config.seed}:{len(self.seen)}").choice(unseen))
            self.escapes += 1
        return ""

    def ask(self) -> tuple[Any, Point]:
        """The next trial and its point (InvalidConfiguration for an undeclared value)."""
        trial = self.study.ask(self.dists)
        return trial, self.space.point(self._decode(trial.params))

    # A strategy that models numbers only (Strategy.indexed: CMA-ES) is given each parameter as
    # the index of its value in ``choices`` (samplers.distributions); the others, the values.
    # Here, beside the only calls, rather than in samplers.py: a trial's parameters become the
    # Point in one file.
    def _encode(self, params: dict[str, Any]) -> dict[str, Any]:
        if STRATEGY[self.config.strategy].indexed:
            return {k: self.choices[k].index(v) for k, v in params.items()}
        return dict(params)

    def _decode(self, params: dict[str, Any]) -> dict[str, Any]:
        if STRATEGY[self.config.strategy].indexed:
            return {k: self.choices[k][int(i)] for k, i in params.items()}
        return dict(params)

    def rejected(self) -> None:
        """The trial's point was invalid or flagged: no new point."""
        self.stall += 1

    def note(self, p: Point) -> bool:
        """Marks the point seen; True when it is new (a point of the budget)."""
        if p in self.seen:
            self.stall += 1
            return False
        self.seen.add(p)
        self.stall = 0
        return True


def _holds(dist: Any, value: Any) -> bool:
    """``value`` is one of the distribution's: else it stays a fixed parameter only, and
    ``ask`` warns of it as Optuna does (a trial's own parameters must be contained)."""
    try:
        return bool(dist._contains(dist.to_internal_repr(value)))
    except (ValueError, TypeError):
        return False
