"""Optuna's storage for the studies of a results database: the same SQLite file (Optuna's own
tables beside the ``rt_`` ones), for the command line and the Python API alike."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from reducetune.errors import StoreError

__all__ = ["open_storage", "storage_url"]


def storage_url(path: str | os.PathLike[str]) -> str:
    """``sqlite:///`` URL of the file at path (absolute), built by SQLAlchemy so that a ``?``,
    ``%`` or ``#`` in the path is quoted instead of read as a query or an escape.

    Optuna fills its URL in as a ``str.format`` template, so braces are doubled too (SQLAlchemy
    quotes them already; this only guards against a version that does not)."""
    from sqlalchemy.engine import URL, make_url

    database = str(Path(path).resolve())
    url = URL.create("sqlite", database=database).render_as_string(hide_password=False)
    if make_url(url).database != database:  # an older SQLAlchemy that does not quote paths
        raise StoreError(f"this SQLAlchemy cannot name {database} in a URL; use a path "
                         "without '?', '%' or '#' for the database")
    return url.replace("{", "{{").replace("}", "}}")


def open_storage(path: str | os.PathLike[str]) -> Any:
    """Optuna's RDBStorage in the results file at path."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.storages.RDBStorage(storage_url(path),
                                      engine_kwargs={"connect_args": {"timeout": 60}})
