"""The sentence model of the semantic pass, read from the package that ships it whole (issue 21).

WordLlama's wheel holds its 256-dimension static embedding table and its
tokenizer file; the table and the tokenizer are read from the installed files
directly. The `wordllama` package itself is never imported: its loader looks
for the tokenizer in a cache folder and then goes to the network, and a
forensic tool must never do that. Nothing here runs unless a command asks for
the semantic pass, so the other commands pay nothing.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from scanner.core.errors import ScannerError
from scanner.engine.semantic import StaticModel, meaning_projection
from scanner.engine.subwords import encodable, encode_words, flat_ids, merges_of

MODEL_NAME = "wordllama-l2_supercat_256"
_WEIGHTS = Path("weights") / "l2_supercat_256.safetensors"
_TOKENIZER = Path("tokenizers") / "l2_supercat_tokenizer_config.json"
NOT_INSTALLED = "the sentence model is not installed (pip install wordllama)"


class ModelUnavailable(ScannerError):
    """The semantic model's package is not installed, or its files are damaged."""


def model_folder() -> Path | None:
    """Where the model's package is installed (found without importing it), or None."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model_key() -> str | None:
    """The key `load_model()` would give its model ("name@version"), from the package's metadata, without
    reading it; None when the package is not installed."""
    folder = model_folder()
    if folder is None:
        return None
    return f"{MODEL_NAME}@{_version(folder)}"


def _version(folder: Path | None) -> str:
    """The installed package's version, read from the one METADATA file of its dist-info folder beside it:
    every scan's passage key asks, and importing importlib.metadata costs 30-45 ms (an empty folder's scan
    takes 0.3 s). Anything else (several dist-info folders, another layout) asks importlib.metadata."""
    found = sorted(folder.parent.glob("wordllama-*.dist-info")) if folder is not None else []
    if len(found) == 1:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            for line in (found[0] / "METADATA").read_text(encoding="utf-8").splitlines():
                if not line:  # the headers end: no version among them
                    break
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip()
    import importlib.metadata

    try:
        return importlib.metadata.version("wordllama")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def load_model(folder: Path | None = None) -> StaticModel:
    """The shipped model. Raises ModelUnavailable with the reason when it cannot be read."""
    folder = folder or model_folder()
    if folder is None:
        raise ModelUnavailable(NOT_INSTALLED)
    try:
        from safetensors.numpy import load_file

        tensors = load_file(str(folder / _WEIGHTS))
        tokenizer_file = (folder / _TOKENIZER).read_bytes()
        merges = merges_of(json.loads(tokenizer_file))
        encode = functools.partial(encode_words, merges) if merges is not None else _word_encoder(tokenizer_file)
    except Exception as exc:  # safetensors and tokenizers raise errors of their own kinds
        raise ModelUnavailable(f"the semantic model could not be read from {folder}: {exc}") from exc
    tables = [t for t in tensors.values() if t.ndim == 2]
    if len(tables) != 1:
        raise ModelUnavailable(f"the semantic model in {folder} holds {len(tables)} tables, not one")
    model = StaticModel(MODEL_NAME, _version(folder), tables[0], encode)
    meaning_projection(model.dimensions)  # made with the model (numpy.random's import: ~6 ms), not in a first check
    return model


_PROBE_WORDS = ["the", "harbour", "engineers", "4,000", "naïve", "ﬁnance", "a f t", "e-mail", "l'été", "日本語", ""]


def _word_encoder(tokenizer_file: bytes) -> Callable[[list[str]], tuple[np.ndarray, np.ndarray]]:
    """Subword ids of single words through the tokenizers library, where `subwords.merges_of` cannot take the
    tokenizer (or the compiled module was not built). The library's batch call costs a thread pool's wake-up
    per call (1.7 ms a document under load, more than the embedding); its BPE model called on the normalized
    word is 3x faster with no threads, and is used when it gives the same ids on probe words (this
    tokenizer's normalizer only prepends "▁" and turns spaces into "▁")."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_file.decode("utf-8"))
    tokenizer.no_padding()
    tokenizer.no_truncation()

    def batch(words: list[str]) -> list[list[int]]:
        return [e.ids for e in tokenizer.encode_batch([encodable(w) for w in words], add_special_tokens=False)]

    bpe = tokenizer.model

    def direct(words: list[str]) -> list[list[int]]:
        return [[t.id for t in bpe.tokenize("\u2581" + encodable(w).replace(" ", "\u2581"))] if w else []
                for w in words]

    try:
        same = tokenizer.pre_tokenizer is None and direct(_PROBE_WORDS) == batch(_PROBE_WORDS)
    except Exception:  # noqa: BLE001 - any surprise from the direct path: the tokenizer's own call
        same = False
    chosen = direct if same else batch
    return lambda words: flat_ids(chosen(words))
