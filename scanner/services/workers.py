"""Worker processes with a pipe each: the one mechanism scan and watch share.

A pool of bare processes (not a ProcessPoolExecutor) because a file that
overruns its time budget must be killed with its process, and a process that
ran out of memory must be replaced, without losing the others' work.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Ready:
    """Worker to parent: set up, waiting for a task (the time budget starts with the task)."""


@dataclass(frozen=True)
class Broken:
    """Worker to parent: it cannot set up (the parent stops: every worker would fail the same way)."""

    reason: str


@dataclass(frozen=True)
class Assign:
    """Parent to worker: one task (a path for watch, a batch of (id, path) for scan); None stops the worker."""

    task_id: int
    payload: Any


def address_space_size() -> int:
    """This process's virtual size in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def cap_memory(budget: int | None) -> None:
    """Let this process grow by at most `budget` bytes beyond what it holds now."""
    if budget:
        import resource

        cap = address_space_size() + budget
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


class WorkerProcess:
    """One daemon process running `target(conn, *args)`, and the parent's end of its pipe."""

    def __init__(self, ctx: Any, target: Callable[..., None], args: tuple[Any, ...]) -> None:
        parent, child = ctx.Pipe(duplex=True)
        self.conn = parent
        self.process = ctx.Process(target=target, args=(child, *args), daemon=True)
        self.process.start()
        child.close()
        self.ready = False
        self.started = 0.0

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()

    def stop(self) -> None:
        """Ask the worker to finish, then kill it if it does not."""
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()


def serve_tasks(conn: Any, setup: Callable[[], Any], memory: int | None,
                handle: Callable[[Any, int, Any], bool]) -> None:
    """The worker side: set up, say `Ready` (or `Broken`), then handle `Assign` messages until told to
    stop (None or a closed pipe); `handle(state, id, payload)` returns False to end the process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    # one BLAS thread a worker: the workers already fill the cores, and BLAS threads spinning beside another
    # worker's made the semantic pass's matrix products 3x slower on 2 cores (docs/BENCHMARKS.md)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")
    try:
        state = setup()
        cap_memory(memory)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which stops
        conn.send(Broken(f"{type(exc).__name__}: {exc}"))
        return
    conn.send(Ready())  # the time budget starts with the first task, not with start-up
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if not isinstance(message, Assign):
            return
        if not handle(state, message.task_id, message.payload):
            return
