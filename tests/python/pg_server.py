"""A throwaway PostgreSQL server for the distributed-tuning tests, from the Debian package
(``apt-get install postgresql``: initdb and pg_ctl under /usr/lib/postgresql/VERSION/bin).

The cluster lives in a temporary folder, trusts local connections, and listens only on a
Unix socket in that folder (no TCP port, nothing another user of the machine can reach).
initdb refuses to run as root: as root the server is run as ``nobody`` through ``runuser``
(util-linux), and the folder is given to that user; as anyone else it runs as they are.
``PgServer.why_not()`` says why no server can be started here (the tests skip with it)."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

USER = "reducetune"  # the cluster's superuser (trust authentication)


def _bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return versions[-1] if versions else None


class PgServer:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="reducetune-pg-"))
        self.data = self.folder / "data"
        self.started = False

    @staticmethod
    def why_not() -> str | None:
        if _bin("initdb") is None or _bin("pg_ctl") is None:
            return ("PostgreSQL's initdb is not installed (apt-get install postgresql; "
                    "scripts/setup does)")
        try:
            import psycopg2  # noqa: F401
        except ImportError:
            return "psycopg2 is not installed (pip install psycopg2-binary; scripts/setup does)"
        if os.geteuid() == 0 and shutil.which("runuser") is None:
            return "running as root without runuser: initdb cannot run as root"
        return None

    def _as_owner(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", "nobody", "--", *argv] if os.geteuid() == 0 else argv

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.folder, "nobody")  # its owner: initdb writes there
        subprocess.run(self._as_owner([_bin("initdb") or "initdb", "-D", str(self.data),
                                       "-U", USER, "--auth=trust", "-E", "UTF8",
                                       "--no-sync"]),
                       check=True, capture_output=True, text=True)
        opts = f"-k {self.folder} -c listen_addresses='' -c max_connections=200 -c fsync=off"
        subprocess.run(self._as_owner([_bin("pg_ctl") or "pg_ctl", "-D", str(self.data),
                                       "-l", str(self.folder / "log"), "-o", opts, "-w",
                                       "start"]),
                       check=True, capture_output=True, text=True)
        self.started = True

    def new_database(self) -> str:
        """A fresh database's SQLAlchemy URL (psycopg2 through the Unix socket)."""
        import psycopg2

        name = "t_" + uuid.uuid4().hex[:12]
        con = psycopg2.connect(host=str(self.folder), user=USER, dbname="postgres")
        con.autocommit = True
        con.cursor().execute(f"CREATE DATABASE {name}")
        con.close()
        return f"postgresql+psycopg2://{USER}@/{name}?host={self.folder}"

    def stop(self) -> None:
        if self.started:
            subprocess.run(self._as_owner([_bin("pg_ctl") or "pg_ctl", "-D", str(self.data),
                                           "-m", "immediate", "-w", "stop"]),
                           capture_output=True, check=False)
            self.started = False
        shutil.rmtree(self.folder, ignore_errors=True)
