"""The semantic pass's sentence model for a process (issue 21): loaded once, on demand.

Commands, the TUI and worker processes ask here rather than loading the model themselves, so every one
gets the same behaviour: the model, or None with one reason (not installed, damaged) for the caller to
say; and one BLAS thread for the process. The pass multiplies small matrices (a few hundred sentences by
256 dimensions), which a multi-threaded BLAS made 3 to 16 times slower on this project's 2-core machines
(docs/BENCHMARKS.md, "semantic pass").
"""

from __future__ import annotations

from collections.abc import Callable

from scanner.engine.semantic import MEANING_DIMENSIONS, StaticModel
from scanner.sources.models import NOT_INSTALLED, ModelUnavailable, load_model, model_key


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


class LazyModel:
    """The sentence model named before it is loaded: a step keys what it stores by `key` (the model and its
    version, from the package's metadata), and loads the model only when it has pairs to align, so a
    rescan with nothing new, or an empty folder, never pays for it."""

    def __init__(self, key: str, on_unavailable: Callable[[str], None] | None = None) -> None:
        self.key = key
        self._on_unavailable = on_unavailable
        self._model: StaticModel | None = None
        self._tried = False

    def get(self) -> StaticModel | None:
        """The model (loaded once), or None when it cannot be read after all (said through on_unavailable)."""
        if not self._tried:
            self._tried = True
            self._model = open_model(True, self._on_unavailable)
        return self._model


def lazy_model(enabled: bool, on_unavailable: Callable[[str], None] | None = None) -> LazyModel | None:
    """A LazyModel when `enabled` and the model's package is installed, else None."""
    key = model_key() if enabled else None
    if key is None:
        if enabled and on_unavailable is not None:
            on_unavailable(NOT_INSTALLED)
        return None
    return LazyModel(key, on_unavailable)


def meaning_key(model: StaticModel | LazyModel) -> dict[str, object]:
    """What stored document vectors depend on (`Index.meaning`): another key embeds every document again,
    and `check` with another model does not search them."""
    return {"model": model.key, "dimensions": MEANING_DIMENSIONS}
