"""Process identity: ``{hostname}:{pid}:{random}``, the lease owner and the attempt worker id.

The random suffix makes two processes that share a host name and a recycled pid (containers)
distinct owners, which is how peers ended up with several leaders at once.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessIdentity:
    host: str
    pid: int
    nonce: str

    @property
    def id(self) -> str:
        return f"{self.host}:{self.pid}:{self.nonce}"

    @classmethod
    def new(cls, host: str, pid: int) -> ProcessIdentity:
        return cls(host=host, pid=pid, nonce=secrets.token_hex(4))
