"""How the Python tests are spread over pytest-xdist's workers (scripts/test: two workers,
--dist loadscope, refined here).

A module that defines a module-scoped fixture (a replayed recording, a PostgreSQL server, a
reference sweep, a migrated copy of each committed database) is one unit of work: its tests run
on one worker, so the fixture is built once per run, not once on each worker that happens to
get one of its tests. Every other test is a unit of its own and goes to whichever worker is
free; xdist starts the largest units first, so the single tests even out the end of the run.
(xdist's own loadgroup would do this from marks, but it renames test ids in a way pytest 9 no
longer sees.) The Python tests' fixtures are in tests/python/conftest.py."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest


@functools.cache
def _defines_a_module_fixture(path: Path) -> bool:
    try:
        text = path.read_text()
    except OSError:
        return False
    return 'scope="module"' in text or "scope='module'" in text


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if _defines_a_module_fixture(config.rootpath / module) else nodeid

    return ModuleFixtureScheduling(config, log)
