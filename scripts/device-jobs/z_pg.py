#!/usr/bin/env python3
"""A PostgreSQL server for z_scaling.sh pg (issue 25): the tests' throwaway server
(tests/python/pg_server.py: a Unix socket in a temporary folder, trust, run as nobody when
root) with one database per sweep.

    z_pg.py start STATE    starts it, makes the databases z_single, z_dual and z_quad, writes STATE
                           (JSON) and prints the --storage URL template ({name}: single, dual, quad)
    z_pg.py stop STATE     stops it and removes its folder
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "python"))
from pg_server import USER, PgServer  # noqa: E402


def start(state: Path) -> int:
    why = PgServer.why_not()
    if why:
        print(f"z_pg: no PostgreSQL server: {why}", file=sys.stderr)
        return 1
    import psycopg2

    server = PgServer()
    server.start()  # left running until "stop"
    con = psycopg2.connect(host=str(server.folder), user=USER, dbname="postgres")
    con.autocommit = True
    for name in ("z_single", "z_dual", "z_quad"):
        con.cursor().execute(f"CREATE DATABASE {name}")
    con.close()
    state.write_text(json.dumps({"folder": str(server.folder), "data": str(server.data)}))
    print(f"postgresql+psycopg2://{USER}@/z_{{name}}?host={server.folder}")
    return 0


def stop(state: Path) -> int:
    s = json.loads(state.read_text())
    server = PgServer.__new__(PgServer)  # the one "start" left running
    server.folder, server.data, server.started = Path(s["folder"]), Path(s["data"]), True
    server.stop()
    return 0


if __name__ == "__main__":
    what, state = sys.argv[1], Path(sys.argv[2])
    sys.exit(start(state) if what == "start" else stop(state))
