"""``reducetune tune``'s defaults are TuneConfig's (issue 23 item 3: one source for each fact):
the command with no option builds exactly ``TuneConfig()``, its help says TuneConfig's values,
and each switch flips the default it names."""

from __future__ import annotations

import dataclasses

import pytest

from reducetune.cli import build_parser
from reducetune.cli.tune import DEFAULT, _configs
from reducetune.tuning.config import TuneConfig


def _config(*argv: str) -> TuneConfig:
    (config,) = _configs(build_parser().parse_args(["tune", *argv]))
    return config


def test_the_command_with_no_option_is_tuneconfigs_defaults():
    assert _config() == TuneConfig()


@pytest.mark.parametrize("field", ["family", "strategy", "base_preset", "sample_time_s",
                                   "max_samples", "dtype", "op", "sizes"])
def test_a_changed_default_reaches_the_command(monkeypatch, field):
    # the parser reads DEFAULT when it is built: a new TuneConfig default moves the command
    new = {"family": "seeds", "strategy": "random", "base_preset": "harris6",
           "sample_time_s": 0.25, "max_samples": 50, "dtype": "int32", "op": "max",
           "sizes": [4096]}[field]
    monkeypatch.setitem(DEFAULT, field, new)
    assert getattr(_config(), field) == new


def test_the_help_says_tuneconfigs_values():
    text = " ".join(build_parser()._subparsers._group_actions[0]  # type: ignore[union-attr]
                    .choices["tune"].format_help().split())
    d = TuneConfig()
    for said in (f"(default {d.family})", f"(default {d.strategy})",
                 f"(default {d.base_preset})", f"(default {d.sample_time_s:g} s)",
                 f"(default {d.max_samples})"):
        assert said in text


def test_each_switch_flips_its_default():
    for flag, field in (("--hot", "hot"), ("--allow-flagged", "allow_flagged"),
                        ("--nondeterministic", "nondeterministic"),
                        ("--no-warm-start", "warm_start")):
        default = getattr(TuneConfig(), field)
        assert getattr(_config(), field) == default
        assert getattr(_config(flag), field) == (not default), flag
    assert {f.name for f in dataclasses.fields(TuneConfig)} >= set(DEFAULT)
