"""What a handler writes while it runs (``ctx.output.write(text)``), buffered in memory.

The buffer is the handler's side only: text is masked (resolved secret values → ``***``) and
encoded the moment it is written, so nothing unmasked is ever held for the database. Someone else
(the worker's output sink, or a test) ``take()``s the pending bytes; the writer only counts
offsets. A handler that writes nothing costs one small object and no I/O.

Bytes, not characters: offsets are byte positions in the attempt's whole output, so a reader can
resume exactly where it stopped (``GET …/output?offset=``). Only the last ``OUTPUT_KEEP_BYTES``
are kept: a burst larger than that between two flushes drops its oldest bytes here already.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from cronplane.domain.limits import OUTPUT_KEEP_BYTES


def _no_mask(text: str) -> str:
    return text


class Output:
    """One attempt's output stream. Thread-safe: a handler may write from threads it started
    (``shell.command`` reads stdout and stderr on two)."""

    def __init__(self, mask: Callable[[str], str] = _no_mask,
                 on_first_pending: Callable[[Output], None] | None = None,
                 keep: int = OUTPUT_KEEP_BYTES) -> None:
        self._mask = mask
        self._on_first_pending = on_first_pending
        self._keep = keep
        self._lock = threading.Lock()
        self._pending = bytearray()
        self._pending_start = 0  # byte offset of _pending[0] in the whole output
        self.written = 0  # bytes written so far (including dropped and already taken ones)
        self.closed = False

    def mask_with(self, mask: Callable[[str], str]) -> None:
        """Set by the handler context, whose secret values are known only once the attempt
        starts: ``mask`` is called at each write."""
        self._mask = mask

    def write(self, text: str) -> None:
        """Append ``text`` (masked); ignored after ``close()`` (an abandoned handler's last
        words after its attempt ended are not part of it)."""
        if not text:
            return
        data = self._mask(text).encode("utf-8", "replace")
        with self._lock:
            if self.closed:
                return
            was_empty = not self._pending
            self._pending += data
            self.written += len(data)
            excess = len(self._pending) - self._keep
            if excess > 0:
                del self._pending[:excess]
                self._pending_start += excess
        if was_empty and self._on_first_pending is not None:
            self._on_first_pending(self)

    def line(self, text: str) -> None:
        self.write(text if text.endswith("\n") else text + "\n")

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def take(self) -> tuple[int, bytes] | None:
        """The pending bytes and their start offset, now no longer pending; None if there are
        none."""
        with self._lock:
            if not self._pending:
                return None
            start, data = self._pending_start, bytes(self._pending)
            self._pending.clear()
            self._pending_start = self.written
            return start, data

    def close(self) -> None:
        with self._lock:
            self.closed = True
