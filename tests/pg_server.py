"""A real PostgreSQL server for tests: initdb + pg_ctl in a temp dir on a free loopback port.

Debian keeps the server binaries in /usr/lib/postgresql/<version>/bin (not on PATH), and initdb/pg_ctl
refuse to run as root, so as root they run as ``nobody`` through ``runuser``. Tests skip (with this
reason) only when the binaries are not installed; a server that is installed but fails to start fails.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

UNPRIVILEGED = "nobody"


def find_bin_dir() -> Path | None:
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: p.parent.name, reverse=True)
    for d in candidates:
        if (d / "initdb").is_file() and (d / "pg_ctl").is_file():
            return d
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).parent
    return None


def unavailable_reason() -> str | None:
    if find_bin_dir() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) not installed: apt-get install -y postgresql"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser, so initdb/pg_ctl cannot be run as an unprivileged user"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """One throwaway cluster; :meth:`create_database` gives each test its own empty database."""

    def __init__(self) -> None:
        bin_dir = find_bin_dir()
        assert bin_dir is not None, unavailable_reason()
        self.bin = bin_dir
        # as root the server runs as nobody, who must reach the folder: /tmp, not a private $TMPDIR
        base = "/tmp" if os.geteuid() == 0 and os.path.isdir("/tmp") else None
        self.root = Path(tempfile.mkdtemp(prefix="evaluator-pg-", dir=base))
        self.data = self.root / "data"
        self.port = 0
        self._n = 0
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam(UNPRIVILEGED)
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self.prefix = ["runuser", "-u", UNPRIVILEGED, "--"]

    def _run(self, *args: str) -> None:
        proc = subprocess.run(
            [*self.prefix, *args], cwd=self.root, capture_output=True, text=True, timeout=120, check=False
        )
        if proc.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{Path(args[0]).name} failed ({proc.returncode}): {proc.stderr[-2000:]}\n{tail}")

    def start(self) -> PostgresServer:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "evaluator", "--auth=trust",
                  "-E", "UTF8", "--no-locale", "--no-sync")
        for attempt in range(3):
            self.port = _free_port()
            opts = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                    "-c full_page_writes=off -c synchronous_commit=off -c max_connections=200")
            try:
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
                          "-w", "-t", "60", "-o", opts, "start")
                return self
            except RuntimeError:
                if attempt == 2:
                    raise
        return self

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql+psycopg://evaluator@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        import psycopg
        from psycopg import sql

        self._n += 1
        name = f"test_{self._n}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=evaluator dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
