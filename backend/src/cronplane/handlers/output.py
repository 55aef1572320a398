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
from typing import Protocol

from cronplane.domain.limits import OUTPUT_KEEP_BYTES


class TextMask(Protocol):
    """Masks a stream of text (``domain/secrets.py`` ``StreamMask``): ``feed`` may hold back a
    tail that could be the start of a secret split across two writes; ``flush`` gives it up."""

    def feed(self, text: str) -> str: ...

    def flush(self) -> str: ...


class Output:
    """One attempt's output stream. Thread-safe: a handler may write from threads it started
    (``shell.command`` reads stdout and stderr on two)."""

    def __init__(self, mask: TextMask | None = None,
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

    def mask_with(self, mask: TextMask) -> None:
        """Set by the handler context, whose secret values are known only once the attempt
        starts: every write goes through ``mask``. A mask set while writes are under way (a
        value learnt mid-attempt, such as the job token) takes over what the old one held back,
        so nothing already written is lost and everything from now on is masked by both."""
        with self._lock:
            held = self._mask.flush() if self._mask is not None and not self.closed else ""
            self._mask = mask
            if held:
                # No first-pending callback here: the next write (or close) makes it.
                self._append(mask.feed(held))

    def write(self, text: str) -> None:
        """Append ``text`` (masked); ignored after ``close()`` (an abandoned handler's last
        words after its attempt ended are not part of it)."""
        if not text:
            return
        with self._lock:
            if self.closed:
                return
            # Under the lock: the mask keeps a held-back tail between writes, and
            # shell.command writes from two threads.
            first = self._append(text if self._mask is None else self._mask.feed(text))
        if first and self._on_first_pending is not None:
            self._on_first_pending(self)

    def _append(self, text: str) -> bool:
        """Under the lock; True when this made the buffer non-empty."""
        if not text:
            return False
        data = text.encode("utf-8", "replace")
        was_empty = not self._pending
        self._pending += data
        self.written += len(data)
        excess = len(self._pending) - self._keep
        if excess > 0:
            del self._pending[:excess]
            self._pending_start += excess
        return was_empty

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
        """No more writes; what the mask held back (the end of the output) becomes pending."""
        first = False
        with self._lock:
            if not self.closed and self._mask is not None:
                first = self._append(self._mask.flush())
            self.closed = True
        if first and self._on_first_pending is not None:
            self._on_first_pending(self)
