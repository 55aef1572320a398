"""The rehearsal cluster of ``deploy/ha/`` (etcd, Patroni nodes with ``synchronous_mode``,
HAProxy on Patroni's ``/primary`` check, PgBouncer in transaction mode) driven from a test: start
and stop it, read who leads from Patroni's REST API, and break it the three ways a production
cluster breaks (``patronictl switchover``, ``patronictl failover``, kill -9 of the primary's
postmaster)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import requests

REPO = Path(__file__).resolve().parents[3]
START = REPO / "deploy" / "ha" / "start.sh"
STOP = REPO / "deploy" / "ha" / "stop.sh"


@dataclass(frozen=True)
class Member:
    name: str
    role: str  # leader | sync_standby | replica
    state: str  # running | streaming | stopped | starting | …
    timeline: int | None


class Patroni:
    def __init__(self, root: Path, *, port_base: int, nodes: int = 2) -> None:
        self.root = root
        self.port_base = port_base
        self.nodes = nodes
        self.env: dict[str, str] = {}

    def start(self) -> None:
        env = {**os.environ, "CRONPLANE_HA_PORT_BASE": str(self.port_base),
               "CRONPLANE_HA_NODES": str(self.nodes)}
        done = subprocess.run([str(START), str(self.root)], env=env, capture_output=True,
                              text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"deploy/ha/start.sh exited {done.returncode}:\n{done.stdout}"
                               f"{done.stderr}\n{self.logs()}")
        for line in (self.root / "env").read_text().splitlines():
            key, _, value = line.partition("=")
            self.env[key] = value

    def stop(self) -> None:
        subprocess.run([str(STOP), str(self.root)], capture_output=True, timeout=120, check=False)

    def logs(self, lines: int = 30) -> str:
        out = []
        for path in sorted(self.root.glob("node*/patroni.log")):
            out.append(f"--- {path}")
            out += path.read_text(errors="replace").splitlines()[-lines:]
        return "\n".join(out)

    # -- reading --------------------------------------------------------------------------------
    def rest(self, node: int) -> str:
        return f"http://127.0.0.1:{self.port_base + 10 + node}"

    def members(self) -> list[Member]:
        for node in range(1, self.nodes + 1):
            with contextlib.suppress(requests.RequestException, ValueError):
                data = requests.get(self.rest(node) + "/cluster", timeout=2).json()
                return [Member(m["name"], m["role"], m["state"], m.get("timeline"))
                        for m in data["members"]]
        return []

    def leader(self) -> Member | None:
        """The member that leads and runs (Patroni promoted it: it takes writes)."""
        return next((m for m in self.members()
                     if m.role == "leader" and m.state == "running"), None)

    def primary(self) -> Member | None:
        """The leader once its Postgres takes writes (Patroni names the leader in the DCS a
        moment before its promotion ends)."""
        leader = self.leader()
        if leader is None:
            return None
        port = self.port_base + int(leader.name.removeprefix("node"))
        try:
            with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres",
                                 autocommit=True, connect_timeout=2) as conn:
                row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        except psycopg.Error:
            return None
        return leader if row is not None and not row[0] else None

    def healthy(self) -> bool:
        """A running leader and a synchronous standby that has caught up: the next break can
        lose nothing acknowledged."""
        members = self.members()
        return (any(m.role == "leader" and m.state == "running" for m in members)
                and any(m.role == "sync_standby" and m.state in ("running", "streaming")
                        for m in members))

    def postmaster_pid(self, name: str) -> int:
        return int((self.root / name / "data" / "postmaster.pid").read_text().split()[0])

    # -- breaking -------------------------------------------------------------------------------
    def _ctl(self, *args: str) -> None:
        done = subprocess.run([str(self.root / "patronictl"), *args], capture_output=True,
                              text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"patronictl {' '.join(args)}: {done.stdout}{done.stderr}")

    def standby_of(self, leader: str) -> str:
        return next(m.name for m in self.members() if m.name != leader)

    def switchover(self, leader: str) -> None:
        self._ctl("switchover", "--primary", leader, "--candidate", self.standby_of(leader),
                  "--force")

    def failover(self, leader: str) -> None:
        self._ctl("failover", "--candidate", self.standby_of(leader), "--force")

    def kill9(self, leader: str) -> None:
        os.kill(self.postmaster_pid(leader), signal.SIGKILL)


@contextlib.contextmanager
def patroni_cluster(*, port_base: int, nodes: int = 2) -> Iterator[Patroni]:
    # Not under pytest's tmp_path: its root is private to root, and Patroni and Postgres run as
    # the postgres user.
    root = Path(tempfile.mkdtemp(prefix="cronplane-ha-"))
    root.chmod(0o755)
    cluster = Patroni(root, port_base=port_base, nodes=nodes)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        if not os.environ.get("CRONPLANE_HA_KEEP"):
            shutil.rmtree(root, ignore_errors=True)

