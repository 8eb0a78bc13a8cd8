"""The semantic pass (issue 21): sentence vectors, centred cosines, the shipped model read offline, and
passages found by meaning marked "semantic" in check, the scan's passage pairs and watch."""

from __future__ import annotations

import hashlib
import json
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from corpus import HARBOUR, HARBOUR_RETOLD, prose
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_subwords import listed

from scanner.core.config import Params
from scanner.engine import semantic
from scanner.engine.align import AlignOptions, align
from scanner.engine.canon import canonicalize
from scanner.engine.semantic import (
    QuantizedVectors,
    StaticModel,
    centred_cosines,
    pair_centre,
    sentence_vectors,
    similar_sentences,
)
from scanner.engine.sketch import shingle_text
from scanner.engine.subwords import flat_ids
from scanner.index import Index
from scanner.sources.models import ModelUnavailable, load_model

# Written for these tests: a report paragraph, and the same paragraph with the form of nearly every word
# changed (tense, number, derivation), which shares almost no canonical word with it. Morphology is what
# a subword model sees through and a word-level comparison does not.
ORIGINAL = ("The harbour authority decided to close the northern pier after engineers found deep cracks in its "
            "concrete supports. Fishing boats were told to use the southern quay until the repairs are finished "
            "next spring. Local traders fear that fewer visitors will come to the market while the pier remains "
            "closed. The council has promised a special fund to help the shops that lose income during the "
            "closure. Engineers expect the repair work to cost about four million pounds and to take most of "
            "the winter.")
REFORMED = ("Harbour authorities are deciding on closing northern piers once an engineer finds a deeply cracked "
            "concrete support. Every fishing boat is telling to be using southern quays till repairing finishes "
            "in the next springs. Local trading fears that a visitor comes less to marketing while piers remain "
            "closing. Councils promise specially funding helps every shop losing incomes in closures. An engineer "
            "expects repairing works costing some four millions pound and taking most winters.")


@pytest.fixture(scope="module")
def model() -> StaticModel:
    return load_model()


def toy_model(encoded: list[list[str]]) -> StaticModel:
    """Three-dimensional vectors; each word is its letters' subwords (one id a letter), so a word's vector
    sum and count are known by hand. `encoded` records each batch the model was asked to encode."""
    table = np.array([[1.0 + i % 3, (i * 7) % 5, (i * 3) % 4] for i in range(26)], dtype=np.float32)

    def encode(words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        encoded.append(list(words))
        return flat_ids([[ord(c) - 97 for c in w if "a" <= c <= "z"] for w in words])

    return StaticModel("toy", "1", table, encode)


def test_sentence_vectors_are_the_mean_of_the_subwords(tmp_path: Path) -> None:
    batches: list[list[str]] = []
    toy = toy_model(batches)
    text = "Ab cd. Cd ab ab e. 12"
    tokens = canonicalize(text)
    starts, ends = np.array([0, 2, 5]), np.array([2, 5, 6])  # "Ab cd" | "Cd ab ab" | "e"
    got = sentence_vectors(toy, text, tokens, starts, ends)
    table = toy.table

    def mean(letters: str) -> np.ndarray:
        v = table[[ord(c) - 97 for c in letters]].mean(axis=0)
        return v / np.linalg.norm(v)

    np.testing.assert_allclose(got[0], mean("abcd"), rtol=1e-5)
    np.testing.assert_allclose(got[1], mean("cdabab"), rtol=1e-5)
    np.testing.assert_allclose(got[2], mean("e"), rtol=1e-5)
    # every distinct word encoded once, lower-cased: "12" has no subword and adds nothing
    assert sorted(w for batch in batches for w in batch) == ["12", "ab", "cd", "e"]
    # the same words again are not encoded again; overlapping spans take the slower path, same values
    again = sentence_vectors(toy, text, tokens, np.array([0, 1, 6]), np.array([3, 4, 6]))
    assert len(batches) == 1
    np.testing.assert_allclose(again[0], mean("abcdcd"), rtol=1e-5)
    np.testing.assert_allclose(again[1], mean("cdcdab"), rtol=1e-5)
    assert not again[2].any()  # an empty span: a zero row, not a division by zero
    # spans in any order, nested, one reaching further than the next: each its own words' mean
    spans = [(2, 5), (0, 2), (0, 6), (1, 3), (3, 4)]  # "cd ab ab" | "ab cd" | all but "12" | "cd cd" | "ab"
    anyhow = sentence_vectors(toy, text, tokens, np.array([a for a, _ in spans]), np.array([b for _, b in spans]))
    for row, letters in enumerate(["cdabab", "abcd", "abcdcdababe", "cdcd", "ab"]):
        np.testing.assert_allclose(anyhow[row], mean(letters), rtol=1e-5)


def test_the_word_cache_keeps_each_words_sum_and_subword_count() -> None:
    toy = toy_model([])
    words = [f"{a}{b}{c}" for a in "abcdefghij" for b in "abcdefghij" for c in "abcdefghijk"]  # 1,100
    text = " ".join(words)
    tokens = canonicalize(text)
    vectors = sentence_vectors(toy, text, tokens, np.arange(len(words)), np.arange(1, len(words) + 1))
    sums, counts = toy.word_sums
    assert sums.shape[0] == 1100 and counts.sum() == 3300
    expected = toy.table[[ord(c) - 97 for c in words[-1]]].mean(axis=0)
    np.testing.assert_allclose(vectors[-1], expected / np.linalg.norm(expected), rtol=1e-5)


def test_word_sums_add_each_words_subwords_in_order_as_reduceat_does() -> None:
    """The word cache sums a word's subword vectors a pass per subword position for all new words at once:
    the same float32 sums, to the bit, as adding each word's rows in order (`np.add.reduceat`); a word
    without subwords sums to zeros."""
    from scanner.engine.semantic import _row_sums

    rng = np.random.default_rng(5)
    lengths = rng.integers(0, 9, 400)
    lengths[[0, 7, 399]] = 0
    rows = rng.standard_normal((int(lengths.sum()), 256)).astype(np.float32) * 1e3
    got = _row_sums(rows, lengths)
    nonempty = lengths > 0
    expected = np.zeros_like(got)
    expected[nonempty] = np.add.reduceat(rows, (np.cumsum(lengths) - lengths)[nonempty], axis=0)
    assert got.dtype == np.float32 and got.tobytes() == expected.tobytes()
    assert not got[[0, 7, 399]].any()
    assert _row_sums(rows[:0], np.zeros(3, dtype=np.int64)).shape == (3, 256)


def test_centred_cosines_match_the_explicit_computation() -> None:
    rng = np.random.default_rng(4)
    q = rng.normal(size=(7, 16)).astype(np.float32)
    d = rng.normal(size=(5, 16)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    mean = np.concatenate((q, d)).mean(axis=0)
    qc, dc = q - mean, d - mean
    explicit = (qc @ dc.T) / np.outer(np.linalg.norm(qc, axis=1), np.linalg.norm(dc, axis=1))
    qi, dj, sims = similar_sentences(q, d, -1.0)
    assert qi.shape[0] == 35
    np.testing.assert_allclose(sims, explicit[qi, dj], atol=1e-5)
    np.testing.assert_allclose(centred_cosines(q, d, qi, dj), explicit[qi, dj], atol=1e-5)
    # a threshold keeps the pairs above it, and rows restrict the comparison (the centre stays the same)
    qi, dj, sims = similar_sentences(q, d, 0.2, np.array([1, 3]), np.array([0, 4]))
    keep = [(a, b) for a in (1, 3) for b in (0, 4) if explicit[a, b] >= 0.2]
    assert sorted(zip(qi.tolist(), dj.tolist())) == keep
    np.testing.assert_allclose(sims, [explicit[a, b] for a, b in zip(qi, dj)], atol=1e-5)


def test_the_shipped_model_loads_without_network_nor_its_package(monkeypatch: pytest.MonkeyPatch,
                                                                  model: StaticModel) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError("network blocked by the test")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    loaded = load_model()
    assert loaded.key == model.key and loaded.key.startswith("wordllama-l2_supercat_256@0.4")
    assert loaded.table.shape == (32000, 256)
    assert "wordllama" not in sys.modules  # its loader (which goes online for a tokenizer) never ran


def test_a_damaged_model_folder_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "l2_supercat_256.safetensors").write_bytes(b"not a model")
    with pytest.raises(ModelUnavailable, match="could not be read"):
        load_model(tmp_path)

def test_the_models_version_is_read_from_its_metadata_file_as_importlib_reads_it(tmp_path: Path) -> None:
    import importlib.metadata

    from scanner.sources.models import _version, model_folder, model_key

    assert _version(model_folder()) == importlib.metadata.version("wordllama")
    assert model_key() == f"wordllama-l2_supercat_256@{importlib.metadata.version('wordllama')}"
    package = tmp_path / "wordllama"
    package.mkdir()
    info = tmp_path / "wordllama-9.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wordllama\nVersion: 9.1\n\nVersion: 1.0\n")
    assert _version(package) == "9.1"
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wordllama\n\nVersion: 9.1\n")  # a body line
    assert _version(package) == importlib.metadata.version("wordllama")  # not a header: asked of importlib
    (tmp_path / "wordllama-9.2.dist-info").mkdir()  # two installs: which one Python reads is importlib's call
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wordllama\nVersion: 9.1\n")
    assert _version(package) == importlib.metadata.version("wordllama")



def test_reworded_forms_are_found_by_meaning_only(model: StaticModel) -> None:
    params = Params()
    source = prose(1, 600) + "\n\n" + ORIGINAL + "\n\n" + prose(2, 600)
    suspect = prose(3, 500) + "\n\n" + REFORMED + "\n\n" + prose(4, 500)
    query, doc = shingle_text(suspect, params), shingle_text(source, params)
    assert align(query, suspect, doc, source, params.shingle_size, AlignOptions()) == []  # words: nothing
    found = align(query, suspect, doc, source, params.shingle_size, AlignOptions(), model=model)
    assert [p.kind for p in found] == ["semantic"]
    passage = found[0]
    assert passage.similarity is not None and 0.65 <= passage.similarity <= 1.0
    at = suspect.index(REFORMED)
    assert at <= passage.query_start < passage.query_end <= at + len(REFORMED) + 1
    assert passage.query_end - passage.query_start > 0.6 * len(REFORMED)
    original_at = source.index(ORIGINAL)
    assert original_at <= passage.doc_start and passage.doc_end <= original_at + len(ORIGINAL) + 1
    assert passage.to_json()["kind"] == "semantic" and passage.to_json()["similarity"] == passage.similarity
    # unrelated prose of the same kind is no match, and the semantic pass can be turned off
    other = prose(5, 500) + "\n\n" + prose(6, 150) + "\n\n" + prose(7, 500)
    assert align(shingle_text(other, params), other, doc, source, params.shingle_size, AlignOptions(),
                 model=model) == []
    assert align(query, suspect, doc, source, params.shingle_size, AlignOptions(semantic=None), model=model) == []
    # a pair with more open sentence pairs than `semantic_max_pairs` gets the lexical seeds only
    assert align(query, suspect, doc, source, params.shingle_size, AlignOptions(semantic_max_pairs=100),
                 model=model) == []


def test_a_reworded_passage_grows_by_the_neighbouring_sentences_alike_in_meaning(model: StaticModel) -> None:
    """A translation or rewording keeps its sentences in order; the first and last are often the most changed.
    The sentence pair just past a passage's end, each the other's best partner by meaning, joins it; the pair
    before its start, alike by less than `neighbour_semantic` and not each other's best, does not."""
    from scanner.engine.align import prepare_sentences

    params = Params()
    for seed in range(3):
        source = prose(10 + seed, 200, topic=3) + "\n\n" + " ".join(HARBOUR) + "\n\n" + prose(20 + seed, 200, topic=4)
        suspect = (prose(30 + seed, 200, topic=5) + "\n\n" + " ".join(HARBOUR_RETOLD) + "\n\n"
                   + prose(40 + seed, 200, topic=6))
        query, doc = shingle_text(suspect, params), shingle_text(source, params)
        first, last = suspect.index(HARBOUR_RETOLD[0]), suspect.index(HARBOUR_RETOLD[-1])
        end = last + len(HARBOUR_RETOLD[-1])
        grown, plain, short = ([p for p in align(query, suspect, doc, source, params.shingle_size, options,
                                                  model=model) if p.query_start < end and first < p.query_end]
                               for options in (AlignOptions(), AlignOptions(neighbour_semantic=None),
                                               AlignOptions(neighbour_tokens=40)))
        assert short == plain  # sentences shorter than `neighbour_tokens` (these hold 15-19 tokens) never join
        assert [p.kind for p in plain] == ["reworded"] and plain[0].query_end < last  # the construction
        assert [p.kind for p in grown] == ["reworded"]
        # to the last word of both last sentences (the full stop is no token)
        assert grown[0].query_end == end - 1 and grown[0].doc_end == source.index(HARBOUR[-1]) + len(HARBOUR[-1]) - 1
        assert grown[0].query_start == plain[0].query_start > first
        # what the rule weighed: the last pair alike enough and each other's best, the first pair not
        qs, ds = prepare_sentences(query, suspect, model), prepare_sentences(doc, source, model)
        q_at = query.tokens.starts[qs.sentences.token_start]
        d_at = doc.tokens.starts[ds.sentences.token_start]
        centre = pair_centre(qs.vectors, ds.vectors)
        rows, columns, cosines = similar_sentences(qs.vectors, ds.vectors, -np.inf, None, None, centre)
        table = np.full((qs.vectors.shape[0], ds.vectors.shape[0]), -np.inf)
        table[rows, columns] = cosines
        for q_start, d_start, joins in ((last, source.index(HARBOUR[-1]), True),
                                        (first, source.index(HARBOUR[0]), False)):
            a, b = int(np.flatnonzero(q_at == q_start)[0]), int(np.flatnonzero(d_at == d_start)[0])
            mutual = table[a].argmax() == b and table[:, b].argmax() == a
            assert (mutual and table[a, b] >= AlignOptions().neighbour_semantic) == joins
            assert table[a, b] < AlignOptions().weak_semantic  # too weak for a seed: only the growth joins it


def _folder(root: Path) -> Path:
    root.mkdir()
    (root / "source.txt").write_text(prose(1, 600) + "\n\n" + ORIGINAL + "\n\n" + prose(2, 600), encoding="utf-8")
    for k in range(3):
        (root / f"other{k}.txt").write_text(prose(10 + k, 900), encoding="utf-8")
    return root


def test_check_scan_and_watch_report_semantic_passages(tmp_path: Path) -> None:
    from clirun import run_cli

    folder = _folder(tmp_path / "protected")
    db = tmp_path / "i.db"
    scan = run_cli("scan", str(folder), "--index", str(db), "--json")
    assert scan.returncode == 0, scan.stderr
    # the essay also quotes a sentence of the source verbatim: one verbatim passage and one found by meaning
    # (a source that shares no phrase at all is a candidate only by meaning: the next test)
    quoted = prose(2, 600)[:400]
    suspect = tmp_path / "essay.txt"
    suspect.write_text(prose(3, 500) + "\n\n" + REFORMED + "\n\n" + prose(4, 300) + "\n\n" + quoted,
                       encoding="utf-8")

    checked = run_cli("check", str(suspect), "--index", str(db), "--json")
    result = json.loads(checked.stdout)["results"][0]
    passages = [p for m in result["matches"] if m["path"].endswith("source.txt") for p in m["passages"]]
    assert [p["kind"] for p in passages] == ["semantic", "verbatim"], passages
    assert passages[0]["similarity"] >= 0.65 and "similarity" not in passages[1]
    plain = json.loads(run_cli("check", str(suspect), "--index", str(db), "--json", "--no-semantic").stdout)
    assert [p["kind"] for m in plain["results"][0]["matches"] for p in m["passages"]] == ["verbatim"]

    # the report of the check says which model found its semantic passage (and none with --no-semantic)
    for flag, model_named, kinds in (("--semantic", True, ["semantic", "verbatim"]), ("--no-semantic", False,
                                                                                       ["verbatim"])):
        out = tmp_path / f"report{flag}.json"
        made = run_cli("report", "--index", str(db), "--check", str(suspect), "--format", "json", "-o", str(out),
                       flag)
        assert made.returncode == 0, made.stderr
        report = json.loads(out.read_text(encoding="utf-8"))
        assert (report["selection"]["semantic_model"] or "").startswith("wordllama") is model_named
        found = [p["kind"] for pair in report["pairs"] if pair["b"]["path"].endswith("source.txt")
                 for p in pair["passages"]]
        assert found == kinds

    # watch --once: the reformed paragraph dropped into a watched folder is evidence, never called verbatim
    watched = tmp_path / "outbox"
    watched.mkdir()
    (watched / "memo.txt").write_text(suspect.read_text(encoding="utf-8"), encoding="utf-8")
    watch = run_cli("watch", str(watched), "--index", str(db), "--once", "--jsonl")
    alerts = [json.loads(line) for line in watch.stdout.splitlines() if line.strip()]
    matches = [m for a in alerts for m in a["matches"]]
    assert len(matches) == 1 and matches[0]["path"].endswith("source.txt")
    assert [p["kind"] for m in matches for p in m["passages"]] == ["semantic", "verbatim"], watch.stdout
    assert "reworded" in matches[0]["rules"] and "passage" in matches[0]["rules"]

    # the scan's passage pairs: the essay scanned with the source holds a stored semantic passage
    (folder / "essay.txt").write_text(suspect.read_text(encoding="utf-8"), encoding="utf-8")
    rescan = json.loads(run_cli("scan", str(folder), "--index", str(db), "--json").stdout)
    pairs = [p for p in rescan.get("passage_pairs", []) if {Path(p["a"]).name, Path(p["b"]).name}
             == {"essay.txt", "source.txt"}]
    assert len(pairs) == 1 and pairs[0]["semantic_passages"] == 1, rescan.get("passage_pairs")
    with Index.open(db) as index:
        assert index.passages.key()["semantic"].startswith("wordllama-l2_supercat_256@")
        essay = index.doc_id_for_sha256(hashlib.sha256(suspect.read_bytes()).hexdigest())
        stored = [p for pair in index.passages.live_pairs() if essay in (pair.doc_a, pair.doc_b)
                  for p in pair.passages]
    assert sorted(p.kind for p in stored) == ["semantic", "verbatim"]
    assert [p.similarity is not None for p in stored if p.kind == "semantic"] == [True]


def test_a_scan_with_nothing_to_align_never_loads_the_model(tmp_path: Path) -> None:
    """The passage step keys its passages by the model's name and version (package metadata) and loads the
    model only when it has pairs to align: a rescan of unchanged files runs with the model unreadable."""
    from clirun import cli_env

    folder = _folder(tmp_path / "texts")
    db = tmp_path / "i.db"
    assert run_cli_json("scan", str(folder), "--index", str(db))["passage_step"]["documents"] == 4
    broken = tmp_path / "sitecustomize.py"  # the model's loader fails in the rescan's process
    broken.write_text("import scanner.sources.models as m\n"
                      "def refuse(*a, **k):\n    raise RuntimeError('model loaded')\n"
                      "m.load_model = refuse\n", encoding="utf-8")
    import subprocess

    env = {**cli_env(), "PYTHONPATH": f"{tmp_path}:{cli_env().get('PYTHONPATH', '')}"}
    rescan = subprocess.run([sys.executable, "-m", "scanner", "scan", str(folder), "--index", str(db), "--json"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert rescan.returncode == 0, rescan.stderr
    assert json.loads(rescan.stdout)["passage_step"]["documents"] == 0 and "model loaded" not in rescan.stderr
    with Index.open(db) as index:
        assert index.passages.key()["semantic"].startswith("wordllama-l2_supercat_256@")  # still keyed by it


def run_cli_json(*args: str) -> dict:
    from clirun import run_cli

    done = run_cli(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_words_are_encoded_as_the_tokenizer_would(model: StaticModel) -> None:
    """The model's word encoder calls the BPE model directly (no thread pool a call); it must give the
    tokenizer's own ids, for plain, accented, hyphenated, letter-spaced and non-Latin words alike."""
    from tokenizers import Tokenizer

    from scanner.sources.models import _TOKENIZER, model_folder

    folder = model_folder()
    assert folder is not None
    tokenizer = Tokenizer.from_file(str(folder / _TOKENIZER))
    text = prose(21, 3000) + " naïve ﬁnance e-mail l'été 日本語 ελληνικά a f t 4,000 x² "
    tokens = canonicalize(text)
    words = sorted({text[s:e].lower() for s, e in zip(tokens.starts.tolist(), tokens.ends.tolist())})
    assert len(words) > 500 and "a f t" in words
    assert listed(*model.encode(words)) == [e.ids for e in tokenizer.encode_batch(words, add_special_tokens=False)]


def test_text_with_lone_surrogates_is_embedded_not_refused(model: StaticModel) -> None:
    """Text decoded with surrogateescape (or an HTML entity &#xD800;) holds lone surrogates, which the
    tokenizer refuses: they are embedded as U+FFFD, and the passage is still found."""
    params = Params()
    source = prose(1, 600) + "\n\n" + ORIGINAL + "\n\n" + prose(2, 600)
    suspect = prose(3, 500) + " caf\udce9 \ud800 " + "\n\n" + REFORMED + "\n\n" + prose(4, 500)
    assert all(listed(*model.encode(["caf\udce9", "\ud800"])))
    found = align(shingle_text(suspect, params), suspect, shingle_text(source, params), source,
                  params.shingle_size, AlignOptions(), model=model)
    assert [p.kind for p in found] == ["semantic"]


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=0, max_size=400), st.text(min_size=0, max_size=400))
def test_any_text_goes_through_the_semantic_pass(model: StaticModel, a: str, b: str) -> None:
    """Hostile text (control characters, surrogates, any script) never makes the pass raise."""
    params = Params()
    base = prose(7, 120)
    left, right = base + " " + a, b + " " + base
    found = align(shingle_text(left, params), left, shingle_text(right, params), right, params.shingle_size,
                  AlignOptions(min_tokens=7), model=model)
    assert all(0 <= p.query_start <= p.query_end <= len(left) for p in found)


def test_a_text_gets_the_same_vectors_whatever_the_process_read_before() -> None:
    """Found on 2,000 real manual pages: two scans stored other passages for one pair, because a word's
    vector came from the spelling a worker met first among all the spellings of one canonical word (here a
    Cyrillic look-alike: "pаyment" and "payment" hash alike in the sketches). A text's vectors depend on the
    text alone."""
    other = "the p\u0430yment was late"
    text = "the payment was late"
    assert canonicalize(other).hashes.tolist() == canonicalize(text).hashes.tolist()
    fresh = toy_model([])
    alone = sentence_vectors(fresh, text, canonicalize(text), np.array([0]), np.array([4]))
    used = toy_model([])
    sentence_vectors(used, other, canonicalize(other), np.array([0]), np.array([4]))
    after = sentence_vectors(used, text, canonicalize(text), np.array([0]), np.array([4]))
    np.testing.assert_array_equal(after, alone)


def test_the_word_cache_starts_again_when_full() -> None:
    """A long-running watch meets new words for ever: the cache holds at most `max_words`, and vectors
    made after it started again are the same."""
    batches: list[list[str]] = []
    toy = toy_model(batches)
    toy.max_words = 40
    first = "ab cd ef " + " ".join(f"w{a}{b}" for a in "abcdefg" for b in "hijkl")  # 38 distinct words
    tokens = canonicalize(first)
    before = sentence_vectors(toy, first, tokens, np.array([0]), np.array([3]))
    sentence_vectors(toy, first, tokens, np.array([0]), np.array([len(tokens)]))
    assert toy.word_sums[0].shape[0] == 38
    other = "zz yy xx"  # 3 new words: past 40, the cache starts again with this call's words
    sentence_vectors(toy, other, canonicalize(other), np.array([0]), np.array([3]))
    assert toy.word_sums[0].shape[0] == 3
    again = sentence_vectors(toy, first, tokens, np.array([0]), np.array([3]))
    np.testing.assert_allclose(again, before, rtol=1e-6)


def test_a_text_with_more_distinct_words_than_the_cache_holds_is_embedded_whole() -> None:
    """The cache has room for `max_words` words from the start; one text with more distinct words than that
    makes room for them all, and its vectors are those a roomy cache gives."""
    text = " ".join(f"w{a}{b}" for a in "abcdefg" for b in "hijkl")  # 35 distinct words
    tokens = canonicalize(text)
    spans = (np.array([0, 10, 20]), np.array([10, 20, len(tokens)]))
    roomy = sentence_vectors(toy_model([]), text, tokens, *spans)
    small = StaticModel("toy", "1", toy_model([]).table, toy_model([]).encode, max_words=8)
    assert small.word_sums[0].shape[0] == 0
    np.testing.assert_array_equal(sentence_vectors(small, text, tokens, *spans), roomy)
    assert small.word_sums[0].shape[0] == 35


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@pytest.mark.parametrize("width", [16, 37, 256])
def test_best_centred_cosines_equal_each_pairs_best(monkeypatch: pytest.MonkeyPatch, compiled: bool,
                                                    width: int) -> None:
    """One call for many partners, each centred on its own joint mean with the query: the best of what
    `similar_sentences` gives each pair, by the compiled kernel (its lanes and their tail: widths 16, 37 and
    the model's 256) and by the numpy form, in blocks of partners and of query rows alike."""
    from scanner.engine import semantic
    from scanner.engine.semantic import best_centred_cosines

    if compiled and semantic.compiled is None:
        pytest.skip("the compiled loops were not built")
    if not compiled:
        monkeypatch.setattr(semantic, "compiled", None)
    rng = np.random.default_rng(4)

    def unit(n: int) -> np.ndarray:
        v = rng.normal(size=(n, width)).astype(np.float32) + 0.5  # a shared component, as real sentence vectors
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    query = unit(9)
    partners = [unit(n) for n in (4, 1, 0, 12, 7)]
    partners[3][5] = query[2] * 0.9 + partners[3][5] * 0.1  # one close pair
    expected = [float(similar_sentences(query, p, -2.0)[2].max()) if p.shape[0] else -np.inf for p in partners]
    assert np.allclose(best_centred_cosines(query, partners), expected, atol=1e-5)
    assert best_centred_cosines(query, partners)[3] > 0.85 > max(best_centred_cosines(query, partners)[[0, 1, 4]])
    monkeypatch.setattr(semantic, "_PAIRS_PER_BLOCK", 7)  # one partner a block, a few query rows at a time
    assert np.allclose(best_centred_cosines(query, partners), expected, atol=1e-5)
    assert best_centred_cosines(query[:0], partners).tolist() == [-np.inf] * 5


def test_best_centred_kernel_gives_the_same_bits_in_its_plain_and_vector_forms() -> None:
    """`loops.best_centred` adds each product to lane k mod 16 and the lanes in one tree, by AVX2 instructions
    when the width is a multiple of 16 and in plain C otherwise: a column of zeros added (width 48 -> 49)
    changes no sum, so both forms must give the same bits."""
    from scanner.engine.kernels import compiled

    if compiled is None:
        pytest.skip("the compiled loops were not built")
    rng = np.random.default_rng(7)
    query = rng.normal(size=(11, 48)).astype(np.float32)
    partners = [rng.normal(size=(n, 48)).astype(np.float32) for n in (3, 9, 1)]

    def best(q: np.ndarray, ps: list[np.ndarray]) -> np.ndarray:
        out = np.empty(len(ps))
        compiled.best_centred(q, ps, q.shape[1], out)
        return out

    def padded(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.hstack([a, np.zeros((a.shape[0], 1), dtype=np.float32)]))

    vector, plain = best(query, partners), best(padded(query), [padded(p) for p in partners])
    assert vector.tolist() == plain.tolist() and np.isfinite(vector).all()


def test_the_bounds_keep_pairs_found_by_meaning_alone(model: StaticModel) -> None:
    """A paragraph reworded past its words (REFORMED) is held by no verbatim run and few shared words: the
    bound by meaning keeps its pair for the sentence alignment; unrelated prose is ruled out."""
    from scanner.engine.align import may_hold_anchor, prepare_sentences

    params = Params()
    options = AlignOptions(min_tokens=params.min_passage_words)

    def prepared(text: str):
        return prepare_sentences(shingle_text(text, params), text, model)

    host = prepared(prose(3, 300) + "\n\n" + REFORMED + "\n\n" + prose(4, 300))
    partners = [prepared(ORIGINAL), prepared(prose(5, 500)), prepared(prose(6, 500))]
    lexical_only = may_hold_anchor(host, partners, AlignOptions(min_tokens=params.min_passage_words, semantic=None))
    assert may_hold_anchor(host, partners, options).tolist() == [True, False, False]
    assert lexical_only.tolist() == [False, False, False]  # its words alone would have ruled it out


def test_a_source_sharing_no_phrase_is_found_by_meaning(tmp_path: Path) -> None:
    """A rewritten paragraph whose source shares no word sequence with it gives no anchor: the scan stores every
    document's vector by meaning, and `check` aligns the documents nearest the query by meaning too. Without
    the vectors (a scan with --no-semantic) the same check finds nothing; a rescan embeds only what is new."""
    from clirun import run_cli

    folder = tmp_path / "protected"
    folder.mkdir()
    (folder / "source.txt").write_text(prose(1, 300, topic=40) + "\n\n" + ORIGINAL + "\n\n" + prose(2, 300, topic=40),
                                       encoding="utf-8")
    for k in range(12):
        (folder / f"other{k}.txt").write_text(prose(10 + k, 700), encoding="utf-8")
    suspect = tmp_path / "essay.txt"
    suspect.write_text(prose(3, 300, topic=40) + "\n\n" + REFORMED + "\n\n" + prose(4, 200, topic=40),
                       encoding="utf-8")

    def sources(db: Path, *flags: str) -> list[list[str]]:
        done = run_cli("check", str(suspect), "--index", str(db), "--json", *flags)
        assert done.returncode == 0, done.stderr
        return [[p["kind"] for p in m["passages"]] for m in json.loads(done.stdout)["results"][0]["matches"]
                if m["path"].endswith("source.txt")]

    plain = tmp_path / "plain.db"
    assert run_cli_json("scan", str(folder), "--index", str(plain), "--no-semantic")["passage_step"]["embedded"] == 0
    assert sources(plain) == []  # no shared anchor, and no vectors: not a candidate
    db = tmp_path / "i.db"
    assert run_cli_json("scan", str(folder), "--index", str(db))["passage_step"]["embedded"] == 13
    assert sources(db) == [["semantic"]]
    assert sources(db, "--no-semantic") == []
    with Index.open(db) as index:
        ids, vectors = index.meaning.vectors()
        assert ids.shape[0] == 13 and vectors.shape == (13, 64) and np.abs(vectors).sum(axis=1).min() > 0
        assert index.meaning.key()["model"].startswith("wordllama-l2_supercat_256@")
    (folder / "new.txt").write_text(prose(30, 500), encoding="utf-8")
    assert run_cli_json("scan", str(folder), "--index", str(db))["passage_step"]["embedded"] == 1
    # scanned together, the essay's nearest documents by meaning are pairs the scan aligns too
    (folder / "essay.txt").write_text(suspect.read_text(encoding="utf-8"), encoding="utf-8")
    rescan = run_cli_json("scan", str(folder), "--index", str(db))
    assert rescan["passage_step"]["meaning_pairs"] > 0
    def essay_and_source(found: dict) -> list[dict]:
        return [p for p in found["passage_pairs"] if {Path(p["a"]).name, Path(p["b"]).name}
                == {"essay.txt", "source.txt"}]

    pairs = essay_and_source(rescan)
    assert len(pairs) == 1 and pairs[0]["semantic_passages"] == 1, rescan["passage_pairs"]
    assert essay_and_source(run_cli_json("scan", str(folder), "--index", str(plain), "--no-semantic")) == []


def _scanned_texts(tmp_path: Path, texts: dict[str, str]) -> Path:
    """These texts written as files of one folder and scanned (no passage step) into a new index: its path."""
    from scanner.services.scan.run import run_scan
    from scanner.sources.plugins import make_plugin_manager

    folder = tmp_path / "texts"
    folder.mkdir()
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    db = tmp_path / "i.db"
    with Index.open(db, readonly=False) as index:
        run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
    return db


def test_too_many_documents_to_compare_by_meaning_add_no_pairs_and_say_so(tmp_path: Path, model: StaticModel,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Comparing every new document with every indexed one by meaning has a bound: past it the scan adds no
    pair by meaning and its run says so (-1; the CLI prints a notice), instead of stalling."""
    from scanner.services import passages

    db = _scanned_texts(tmp_path, {f"t{k}.txt": prose(70 + k, 300) for k in range(4)})
    with Index.open(db, readonly=False) as index:
        monkeypatch.setattr(passages, "MEANING_PAIRS_LIMIT", 15)  # 4 new documents x 4 indexed: 16
        assert passages.align_index(index, Params(), jobs=0, model=model).meaning_pairs == -1


def test_a_document_too_long_for_sentences_gets_no_vector(tmp_path: Path, model: StaticModel,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Past SENTENCE_MAX_TOKENS a document is never embedded (nor read) for its vector by meaning: it keeps a
    zero vector, is never a candidate by meaning, and is not embedded again on the next scan."""
    from scanner.services import pair_alignment, passages

    db = _scanned_texts(tmp_path, {"long.txt": prose(50, 900)} | {f"short{k}.txt": prose(60 + k, 200)
                                                                   for k in range(3)})
    monkeypatch.setattr(pair_alignment, "SENTENCE_MAX_TOKENS", 500)
    with Index.open(db, readonly=False) as index:
        assert passages.align_index(index, Params(), jobs=0, model=model).embedded == 4
        ids, vectors = index.meaning.vectors()
        tokens = index.token_counts(ids.tolist())
        empty = {int(i) for i, v in zip(ids, vectors) if not v.any()}
        assert empty == {i for i, n in tokens.items() if n > 500} and len(empty) == 1
        assert passages.align_index(index, Params(), jobs=0, model=model).embedded == 0


def test_a_document_that_cannot_be_embedded_costs_no_other_its_vector(model: StaticModel, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An embedding task that raises is done again document by document: the others get their vectors, the
    one that raises is reported (by path, as the scan lists it) and has none, so the next step embeds it."""
    from rawsql import raw

    from scanner.services import pair_alignment, passages

    db = _scanned_texts(tmp_path, {f"text{k}.txt": prose(70 + k, 200) for k in range(4)})
    with Index.open(db, readonly=False) as index:
        with raw(index) as conn:
            bad = conn.execute("SELECT doc_id FROM files WHERE path LIKE '%text2.txt'").fetchone()[0]
        real = pair_alignment.embed_documents

        def raising(sides, doc_ids):
            if bad in doc_ids:
                raise ValueError("damaged sentences")
            return real(sides, doc_ids)

        monkeypatch.setattr(pair_alignment, "embed_documents", raising)
        step = passages.align_index(index, Params(), jobs=0, model=model)
        assert step.failures == (pair_alignment.StepFailure((bad,), "ValueError: damaged sentences"),)
        issue, = passages.failure_issues(index, step.failures)
        assert issue.path.endswith("text2.txt") and issue.status == "no vector by meaning"
        assert sorted(index.meaning.missing(index.pairing_inputs(0.5)[0]).tolist()) == [bad]
        monkeypatch.setattr(pair_alignment, "embed_documents", real)
        again = passages.align_index(index, Params(), jobs=0, model=model)
        assert again.embedded == 1 and again.failures == () and index.meaning.missing(np.array([bad])).size == 0


def test_the_stored_form_of_sentence_vectors_reads_back_exactly() -> None:
    """int8 and a scale a row: read back bit for bit, made again from its own vectors unchanged (a vector
    stored, read and stored again does not drift), a zero row kept zero, and unit rows within 0.002 of cosine."""
    rows = np.random.default_rng(5).standard_normal((40, 256)).astype(np.float32)
    rows[7] = 0.0
    unit = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    stored = QuantizedVectors.of(unit)
    back = QuantizedVectors.from_bytes(*stored.to_bytes())
    assert np.array_equal(back.codes, stored.codes) and np.array_equal(back.scales, stored.scales)
    again = QuantizedVectors.of(back.vectors())
    assert np.array_equal(again.codes, stored.codes) and np.array_equal(again.vectors(), stored.vectors())
    vectors = stored.vectors()
    assert not vectors[7].any() and stored.rows == 40 and stored.codes.dtype == np.int8
    live = np.arange(40) != 7
    cosines = (vectors[live] * unit[live]).sum(axis=1) / np.linalg.norm(vectors[live], axis=1)
    assert cosines.min() > 0.998
    with pytest.raises(ValueError):
        QuantizedVectors.from_bytes(stored.to_bytes()[0][:-1], stored.to_bytes()[1])


def test_the_scan_stores_sentence_vectors_that_check_reads_instead_of_embedding(
        tmp_path: Path, model: StaticModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each document the passage step embeds keeps its sentence vectors in the index; `check` reads them for
    its candidates and embeds only the query, with the same report as when it embeds every source (rows
    wiped), or when a row is damaged (read past, embedded again). Documents embedded before sentence vectors
    were stored are embedded once more by the next passage step."""
    from scanner.engine import align as align_module
    from scanner.services import passages
    from scanner.services.check import CheckOptions, check_text
    from scanner.services.scan.run import run_scan
    from scanner.services.semantic import meaning_key
    from scanner.sources.plugins import make_plugin_manager

    folder = _folder(tmp_path / "protected")
    db = tmp_path / "i.db"
    suspect = prose(3, 500) + "\n\n" + REFORMED + "\n\n" + prose(4, 300) + "\n\n" + prose(2, 600)[:400]
    embedded: list[int] = []
    real = align_module.sentence_vectors

    def counted(*args: object) -> np.ndarray:
        embedded.append(len(args[2]))  # type: ignore[arg-type]
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(align_module, "sentence_vectors", counted)
    with Index.open(db, readonly=False) as index:
        run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
        assert passages.align_index(index, Params(), jobs=0, model=model).embedded == 4
        key = meaning_key(model)
        for doc_id in index.token_counts(index.meaning.vectors()[0].tolist()):
            text = index.text(doc_id)
            assert text is not None
            stored = index.sentence_vectors(doc_id, key)
            made = align_module.prepare_sentences(shingle_text(text, Params()), text, model)
            assert stored is not None and made.quantized is not None
            assert np.array_equal(stored.codes, made.quantized.codes)
            assert np.array_equal(stored.scales, made.quantized.scales)
        assert index.sentence_vectors(doc_id, {**key, "model": "another@1"}) is None

        def checked() -> tuple[object, int]:
            embedded.clear()
            report = check_text(suspect, index, index.params, CheckOptions(semantic=model))
            return report, len(embedded)

        read, embeddings = checked()
        assert [p.kind for m in read.matches for p in m.passages] == ["semantic", "verbatim"]  # type: ignore[attr-defined]
        assert embeddings == 1  # the query alone
        index._conn.execute("UPDATE sentence_vectors SET scales = x'00'")  # damaged: read past
        damaged, embeddings = checked()
        assert damaged == read and embeddings == 5  # the query and its four sources
        index._conn.execute("DELETE FROM sentence_vectors")
        assert checked() == (read, 5)
        # an index embedded before sentence vectors were stored: the next step embeds its documents once more,
        # and holds each one's vector by meaning once (not one row a time it was embedded)
        assert passages.align_index(index, Params(), jobs=0, model=model).embedded == 4
        rows = index._conn.execute("SELECT sum(length(ids)) / 8 FROM meaning_blocks").fetchone()[0]
        assert rows == index.meaning.vectors()[0].shape[0] == 4 and not index.meaning.compact()
        assert checked() == (read, 1)
        assert passages.align_index(index, Params(), jobs=0, model=model).embedded == 0


def test_the_lookup_beside_the_search_by_meaning_gives_the_same_candidates_and_its_errors(
        tmp_path: Path, model: StaticModel) -> None:
    """With the semantic pass `check` looks its candidates up on a thread while it embeds the query and
    searches the documents nearest by meaning: the documents it then aligns are the nearest ones not already
    among its candidates nor skipped, as many as when searched after the look-up, and an error of either
    reaches the caller."""
    from scanner.core.errors import IndexStoreError
    from scanner.engine.align import prepare_query
    from scanner.engine.semantic import document_vector
    from scanner.services import check as check_module
    from scanner.services import passages
    from scanner.services.check import CheckOptions, check_text
    from scanner.services.scan.run import run_scan
    from scanner.services.semantic import meaning_key
    from scanner.sources.plugins import make_plugin_manager

    folder = tmp_path / "protected"
    folder.mkdir()
    for k in range(9):
        (folder / f"doc{k}.txt").write_text(prose(40 + k, 300, topic=40), encoding="utf-8")
    suspect = prose(3, 300, topic=40) + "\n\n" + REFORMED
    db = tmp_path / "i.db"
    with Index.open(db, readonly=False) as index:
        run_scan([str(folder)], index, make_plugin_manager(), Params(), jobs=0)
        passages.align_index(index, Params(), jobs=0, model=model)
    with Index.open(db) as index:
        by_path = {Path(index.document(doc_id).paths[0]).name: doc_id for doc_id in index.meaning.vectors()[0].tolist()}
        skipped = frozenset({by_path["doc0.txt"], by_path["doc1.txt"]})
        aligned: list[int] = []

        class Recorded:
            """The index, recording which documents' texts `check` reads and failing its search on demand."""

            fail = False
            fail_lookup = False

            def __getattr__(self, name: str) -> object:
                return getattr(index, name)

            def candidates(self, *args: object, **kwargs: object) -> list[tuple[int, int]]:
                if self.fail_lookup:
                    raise IndexStoreError("index i.db: database disk image is malformed")
                return index.candidates(*args, **kwargs)  # type: ignore[arg-type]

            def texts(self, doc_ids: list[int]) -> list[str | None]:
                aligned.extend(doc_ids)
                return index.texts(doc_ids)

            def meaning_search(self, key: dict[str, object]) -> Callable[[np.ndarray, int], list[int]]:
                if self.fail:
                    raise IndexStoreError("index i.db: disk I/O error")
                return index.meaning_search(key)

        source = Recorded()
        check_text(suspect, source, index.params, CheckOptions(semantic=model, skip_doc_ids=skipped))
        query = shingle_text(suspect, index.params)
        assert index.candidates(np.unique(query.fingerprints)) == []  # no shared phrase: all found by meaning
        vectors = prepare_query(query, suspect, model=model).split.vectors  # type: ignore[union-attr]
        ranked = index.nearest_in_meaning(document_vector(vectors), 9, meaning_key(model))
        assert aligned == [d for d in ranked if d not in skipped][:check_module.MEANING_CANDIDATES]
        # one connection used by two threads at once can crash the sqlite3 module (a suite run here stopped on
        # a segmentation fault in the look-up's commit): while the look-up's thread runs (kept alive 0.2 s
        # more), this thread reads nothing through the connection
        main, looking, overlapping = threading.get_ident(), threading.Event(), []

        class Watched(check_module._Background):  # type: ignore[type-arg]
            def __init__(self, call: Callable[[], object]) -> None:
                looking.set()

                def slow() -> object:
                    try:
                        time.sleep(0.2)
                        return call()
                    finally:
                        looking.clear()

                super().__init__(slow)

        def traced(sql: str) -> None:
            if threading.get_ident() == main and looking.is_set():
                overlapping.append(sql)

        index._conn.set_trace_callback(traced)
        try:
            with pytest.MonkeyPatch.context() as watched:
                watched.setattr(check_module, "_Background", Watched)
                check_text(suspect, source, index.params, CheckOptions(semantic=model))
        finally:
            index._conn.set_trace_callback(None)
        assert overlapping == []
        Recorded.fail = True
        with pytest.raises(IndexStoreError, match="disk I/O error"):
            check_text(suspect, source, index.params, CheckOptions(semantic=model))
        Recorded.fail, Recorded.fail_lookup = False, True
        with pytest.raises(IndexStoreError, match="malformed"):
            check_text(suspect, source, index.params, CheckOptions(semantic=model))


def test_texts_embedded_together_get_each_ones_vectors_to_the_bit(model: StaticModel) -> None:
    """A scan's step embeds its new documents many at a time: each text's sentence vectors are those it gets
    alone, to the bit (a word two texts spell their own ways, "Straße" and "STRASSE", a text without words,
    spans past its end or overlapping, a text with no span), and `embed_many` gives a prepared text what its
    own lazy embedding would."""
    from scanner.engine.align import embed_many, prepare_sentences
    from scanner.engine.semantic import sentence_vectors_many

    texts = [ORIGINAL, "Café CAFÉ café naïve. Die Straße ist lang!", "", REFORMED, "日本語の文。次の文。",
             "THE STRASSE IS LONG: harbour authorities are deciding on closing northern piers."]
    tokens = [canonicalize(text) for text in texts]
    spans = [(np.array([0, 3, 7]), np.array([3, 7, 12])), (np.array([0, 2]), np.array([2, 40])),
             (np.array([0]), np.array([4])), (np.array([0, 3]), np.array([10, 20])), (np.array([0]), np.array([9])),
             (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))]
    alone_model = load_model()  # a fresh word cache for each way: what a text gets never depends on it
    alone = [sentence_vectors(alone_model, t, k, a, b) for t, k, (a, b) in zip(texts, tokens, spans)]
    together = sentence_vectors_many(model, texts, tokens, [a for a, _ in spans], [b for _, b in spans])
    assert [v.shape for v in together] == [(3, 256), (2, 256), (1, 256), (2, 256), (1, 256), (0, 256)]
    for one, many in zip(alone, together):
        assert one.dtype == many.dtype == np.float32 and one.tobytes() == many.tobytes()
    assert not together[2].any() and together[1][0].any()
    with pytest.MonkeyPatch.context() as numpy_only:  # the compiled sums against numpy's, their reference
        numpy_only.setattr(semantic, "compiled", None)
        by_numpy = sentence_vectors_many(model, texts, tokens, [a for a, _ in spans], [b for _, b in spans])
    assert [v.tobytes() for v in by_numpy] == [v.tobytes() for v in together]
    params = Params()
    shingled = [shingle_text(text, params) for text in texts]
    lazy = [prepare_sentences(s, t, model) for s, t in zip(shingled, texts)]
    batch = [prepare_sentences(s, t, model) for s, t in zip(shingled, texts)]
    embed_many(batch, shingled, texts, model)
    for one, made in zip(lazy, batch):
        assert made.is_made  # made by the batch, not on demand
        assert one.quantized is not None and made.quantized is not None
        assert np.array_equal(one.quantized.codes, made.quantized.codes)
        assert np.array_equal(one.quantized.scales, made.quantized.scales)


@pytest.mark.parametrize(("block", "texts"), [(1_000_000, (11, 9)), (5, (11, 9)), (1_000_000, (40, 61))])
def test_lexical_seeds_and_pairs_by_meaning_are_joined_as_defined(monkeypatch: pytest.MonkeyPatch, block: int,
                                                                  texts: tuple[int, int]) -> None:
    """`_with_meaning` reads every cosine from one product of the open rows: the pairs it gives are the
    lexical seeds and the pairs at `weak` or more (`similar_sentences`), each once, in query then doc order,
    with the cosine `similar_sentences` gives it and the lexical seeds' Dice kept; also when the product is
    made a few rows at a time (5 cells a block: seeds fall on the edges of blocks), and with rows long enough
    for the compiled cosines' vector form (8 cells an instruction, then the rest one by one)."""
    from scanner.engine import align, semantic
    from scanner.engine.sentences import SentenceSeeds

    monkeypatch.setattr(semantic, "_PAIRS_PER_BLOCK", block)
    rng = np.random.default_rng(7)

    def unit(n: int) -> np.ndarray:
        v = rng.normal(size=(n, 16)).astype(np.float32) + 0.3
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    q_vectors, d_vectors = unit(texts[0]), unit(texts[1])
    q_rows, d_rows = ((np.array([0, 2, 3, 6, 7, 10]), np.array([1, 2, 4, 5, 8])) if texts == (11, 9)
                      else (np.arange(0, texts[0], 2), np.delete(np.arange(texts[1]), [3, 17, 30])))
    n_d = d_rows.shape[0]
    cells = np.sort(rng.choice(q_rows.shape[0] * n_d, size=7, replace=False))
    if texts != (11, 9):  # a row's first and last cells lexical too
        cells = np.unique(np.concatenate((cells, [n_d, 2 * n_d - 1, 3 * n_d - 1, 3 * n_d])))
    lexical = SentenceSeeds(q_rows[cells // n_d], d_rows[cells % n_d], rng.uniform(0.3, 1, cells.shape[0]),
                            rng.uniform(0.3, 1, cells.shape[0]), np.zeros(cells.shape[0]))
    sums = (semantic.vector_sum(q_vectors), semantic.vector_sum(d_vectors))
    weak = 0.1
    found, is_lexical = align._with_meaning(lexical, q_vectors, d_vectors, weak, q_rows, d_rows, sums)

    centre = pair_centre(q_vectors, d_vectors, sums)
    every_q, every_d, every = similar_sentences(q_vectors, d_vectors, -np.inf, q_rows, d_rows, centre)
    cosine = {(q, d): c for q, d, c in zip(every_q.tolist(), every_d.tolist(), every.tolist())}
    seeds = {(q, d): k for k, (q, d) in enumerate(zip(lexical.query.tolist(), lexical.doc.tolist()))}
    expected = sorted(set(seeds) | {pair for pair, c in cosine.items() if c >= weak})
    assert 7 < len(expected) < len(cosine)  # some by meaning alone, some not similar enough
    assert list(zip(found.query.tolist(), found.doc.tolist())) == expected
    assert found.meaning.tolist() == [cosine[pair] for pair in expected]
    assert is_lexical.tolist() == [pair in seeds for pair in expected]
    assert found.dice.tolist() == [lexical.dice[seeds[pair]] if pair in seeds else 0.0 for pair in expected]
    assert found.cosine.tolist() == [lexical.cosine[seeds[pair]] if pair in seeds else 0.0 for pair in expected]
    monkeypatch.setattr(align, "loops", None)  # numpy's blocks, the compiled seeds' reference: the same bits
    by_numpy, numpy_lexical = align._with_meaning(lexical, q_vectors, d_vectors, weak, q_rows, d_rows, sums)
    assert np.array_equal(numpy_lexical, is_lexical)
    for field in ("query", "doc", "dice", "cosine", "meaning"):
        assert getattr(by_numpy, field).tobytes() == getattr(found, field).tobytes(), field
