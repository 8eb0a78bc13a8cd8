"""The semantic pass's sentence model for a process (issue 21): loaded once, on demand.

Commands, the TUI and worker processes ask here rather than loading the model themselves, so every one
gets the same behaviour: the model, or None with one reason (not installed, damaged) for the caller to
say; and one BLAS thread for the process. The pass multiplies small matrices (a few hundred sentences by
256 dimensions), which a multi-threaded BLAS made 5 to 15 times slower on this project's 2-core machines
(docs/BENCHMARKS.md, "semantic pass").
"""

from __future__ import annotations

from collections.abc import Callable

from scanner.engine.semantic import StaticModel
from scanner.sources.models import ModelUnavailable, load_model


def open_model(enabled: bool, on_unavailable: Callable[[str], None] | None = None) -> StaticModel | None:
    """The sentence model when `enabled` and readable, else None (`on_unavailable` hears why)."""
    if not enabled:
        return None
    try:
        model = load_model()
    except ModelUnavailable as exc:
        if on_unavailable is not None:
            on_unavailable(str(exc))
        return None
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")
    return model
