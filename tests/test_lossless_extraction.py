"""Issue 15: extraction never drops text silently.

* The HTML extractor lets no unclosed element swallow the rest of a document.
* A text-like file whose extractor kept less than 90 % of its words is PARTIAL,
  says so, and has its raw text indexed after the extractor's.
* Bytes of an odd type that decode as text are read as text.
* End to end: a `.txt` manual page holding an excerpt of a protected document
  is found by `scanner check` (the real CLI) and by the watcher's check.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from pathlib import Path

import pytest

from scanner.core.config import Params
from scanner.core.model import Extracted, TextStatus
from scanner.index.store import Index
from scanner.services.scan.run import run_scan
from scanner.sources.extract import detect_mime, extract_bytes, extract_file
from scanner.sources.extract.loss import NON_TEXT_ELEMENTS, count_words, visible_text
from scanner.sources.limits import ExtractLimits
from scanner.sources.plugins import Extractor, hookimpl, make_plugin_manager
from tests.clirun import run_cli
from tests.corpus import prose
from tests.test_routing_types import man_page

PROTECTED = prose(1515, 900)
_WORDS = re.compile(r"\w+")


def excerpt(text: str, chars: int = 1500) -> str:
    """About `chars` characters of `text`, from a sentence start in its middle, whole words."""
    start = text.index(". ", len(text) // 3) + 2
    end = text.rindex(" ", start, start + chars)
    return " ".join(text[start:end].split())


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(text)]


def contains_run(haystack: str, needle: str) -> bool:
    return " ".join(words(needle)) in " ".join(words(haystack))


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager(load_entry_points=False)


class _Lossy:
    """A third-party extractor that keeps only the first line (of text/x-lossy, and of HTML at top priority)."""

    @staticmethod
    @hookimpl
    def scanner_extractors() -> list[Extractor]:
        def first_line(data: bytes, mime: str, limits: ExtractLimits) -> Extracted:
            return Extracted(text=data.decode("utf-8").split("\n", 1)[0], extractor="lossy")

        return [Extractor(name="lossy", mimes=("text/x-lossy", "text/html"), priority=99, extract=first_line)]


@pytest.fixture(scope="module")
def lossy_pm():
    manager = make_plugin_manager(load_entry_points=False)
    manager.register(_Lossy(), name="lossy")
    return manager


# --- the HTML extractor: no unclosed element swallows the rest -------------------------


class TestUnclosedElements:
    @pytest.mark.parametrize("tag", ["script", "style", "head", "header", "nav", "aside", "footer", "noscript",
                                     "template", "select", "iframe"])
    def test_text_after_an_unclosed_element_comes_back(self, pm, tag: str) -> None:
        page = (f"<!DOCTYPE html><html><body><p>Before it.</p><{tag}>\n<p>{PROTECTED}</p>\n"
                "<p>The very end.</p></body></html>").encode()
        result = extract_bytes(page, "text/html", pm)
        assert result.status is TextStatus.OK, result.reason
        assert result.text.startswith("Before it.") and result.text.endswith("The very end.")
        assert contains_run(result.text, PROTECTED)
        assert tag in result.meta["unclosed"]

    def test_closed_scripts_styles_and_boilerplate_are_still_removed(self, pm) -> None:
        page = (b"<!DOCTYPE html><html><head><title>T</title><style>p { color: red }</style>"
                b"<script>var secret = 'in a script';</script></head><body><header>Site header</header>"
                b"<nav><a>Home</a></nav><p>Body text.</p><script>if (a < b) { x('</p>'); }</script>"
                b"<aside>Related</aside><footer>Footer</footer></body></html>")
        result = extract_bytes(page, detect_mime(page), pm)
        assert (result.status, result.body) == (TextStatus.OK, "Body text.")
        assert [label for _, _, label in result.regions] == ["<head>", "<header>", "<nav>", "<aside>", "<footer>"]
        assert "secret" not in result.text and "x('" not in result.text  # code is dropped, prose is kept
        assert "unclosed" not in result.meta

    def test_a_script_that_closes_later_is_still_a_script(self, pm) -> None:
        page = b"<p>a</p><script>x = '<script>'; y();</script><p>b</p><style>unclosed <p>c</p>"
        result = extract_bytes(page, "text/html", pm)
        assert result.text.split("\n") == ["a", "b", "unclosed", "c"]

    def test_the_issue_s_man_page_read_as_html_keeps_its_words(self, pm) -> None:
        """What libmagic's system database made of it: text/html. The extractor now keeps its text."""
        page = man_page(excerpt(PROTECTED)).encode()
        result = extract_bytes(page, "text/html", pm)
        assert result.status in (TextStatus.OK, TextStatus.PARTIAL)
        assert count_words(result.text) >= 0.9 * count_words(page.decode())
        assert contains_run(result.text, excerpt(PROTECTED))

    def test_many_unclosed_scripts_cost_linear_time(self, pm) -> None:
        start = time.perf_counter()
        result = extract_bytes(b"<script>" * 50_000 + b"words at the end", "text/html", pm)
        assert time.perf_counter() - start < 10
        assert result.text.endswith("words at the end")

    def test_many_unclosed_comments_cost_linear_time(self, pm) -> None:
        """100,000 `<!--` that never close took 46 s (the parser searched the rest for `-->` at each)."""
        start = time.perf_counter()
        result = extract_bytes(b"<p>the body</p>" + b"<!-- hidden " * 100_000 + b"words at the end", "text/html", pm)
        assert time.perf_counter() - start < 5
        assert result.text.startswith("the body") and result.text.endswith("words at the end")
        assert result.region_at(len(result.text) - 3, len(result.text)) == "an HTML comment"

    def test_text_after_an_unclosed_comment_is_a_comment_region(self, pm) -> None:
        """A browser hides what follows an unclosed `<!--`: kept, and said to be in a comment."""
        result = extract_bytes(b"<p>shown</p><!-- ok --><p>also shown</p><!-- hidden <b>text</b> to the end",
                               "text/html", pm)
        body = result.body
        assert "shown" in body and "also shown" in body and "hidden" not in body
        at = result.text.index("hidden text to the end")
        assert result.region_at(at, at + 6) == "an HTML comment"
        assert "comment" in result.meta.get("unclosed", "")


# --- the loss check -------------------------------------------------------------------


class TestLossCheck:
    def test_partial_status_has_text_and_is_no_error(self) -> None:
        assert TextStatus.PARTIAL.has_text and not TextStatus.PARTIAL.is_error
        assert TextStatus.PARTIAL.value == "partial"

    def test_a_lossy_extractor_makes_the_file_partial(self, lossy_pm) -> None:
        data = ("Title line\n" + PROTECTED).encode()
        result = extract_bytes(data, "text/x-lossy", lossy_pm)
        assert result.status is TextStatus.PARTIAL
        assert re.fullmatch(r"lossy extractor kept 2 of \d+ words; raw text indexed too", result.reason)
        at = int(result.meta["raw_text_at"])
        assert result.text[: at - 2] == "Title line"  # offsets into the extractor's part stay valid
        assert result.text[at - 2 : at] == "\n\n"
        assert result.text[at:] == data.decode().strip()
        assert contains_run(result.text, excerpt(PROTECTED))

    def test_raw_text_of_markup_drops_tags_when_that_keeps_the_words(self, lossy_pm) -> None:
        """A page whose words are its text: tags out of the raw text (passages stay whole)."""
        page = ("<p>First line</p>\n<p>" + PROTECTED.replace("\n", "</p>\n<p>") + "</p>").encode()
        result = extract_bytes(page, "text/html", lossy_pm)
        assert result.status is TextStatus.PARTIAL
        raw = result.text[int(result.meta["raw_text_at"]) :]
        assert "<p>" not in raw and contains_run(raw, excerpt(PROTECTED))

    def test_raw_text_of_markup_heavy_page_is_verbatim(self, lossy_pm) -> None:
        """Where removing tags would remove more than 10 % of the file's words, the raw text is the file."""
        cells = "".join(f'<td class="c{i}" data-x="v{i} w{i}">{w}</td>' for i, w in enumerate(PROTECTED.split()[:300]))
        page = f"<p>one line</p>\n<table><tr>{cells}</tr></table>".encode()
        result = extract_bytes(page, "text/html", lossy_pm)
        assert result.status is TextStatus.PARTIAL
        assert result.text[int(result.meta["raw_text_at"]) :] == page.decode()

    def test_text_plain_is_verbatim_and_never_checked(self, pm) -> None:
        data = ("<script>" + PROTECTED).encode()
        result = extract_bytes(data, "text/plain", pm)
        assert result.status is TextStatus.OK and result.text == data.decode()

    def test_binary_formats_are_out_of_scope(self, pm) -> None:
        from tests.pdfgen import text_pdf_bytes

        result = extract_bytes(text_pdf_bytes(PROTECTED), "application/pdf", pm)
        assert result.status is TextStatus.OK and "raw_text_at" not in result.meta

    def test_real_pages_are_not_partial(self, pm) -> None:
        """Boilerplate dropped on purpose (closed script, style, nav, header, aside, footer) is no loss."""
        from tests.test_routing_types import html_document

        for style in ("doctype", "plain", "comment", "xhtml", "php-warning", "big-script"):
            page = html_document(style)
            result = extract_bytes(page, detect_mime(page), pm)
            assert result.status is TextStatus.OK, (style, result.reason)

    def test_the_reference_skips_what_the_html_extractor_skips(self) -> None:
        from scanner_plugins.html import SKIP_TAGS

        assert SKIP_TAGS == NON_TEXT_ELEMENTS

    def test_visible_text(self) -> None:
        markup = ("<!DOCTYPE html><html><head><title>T</title></head><body><!-- c --><p class='a>b'>One "
                  "<b>tw</b>o &amp; three</p><nav><nav>x</nav>y</nav><script>z</script><footer>unclosed")
        assert visible_text(markup).split() == ["One", "two", "&", "three", "unclosed"]
        assert "x" in visible_text(markup, drop_elements=False).split()

    @pytest.mark.parametrize("hostile", [
        "<a " * 200_000, '<a x="1" ' * 100_000, '<a x="' + "y " * 300_000, "<script>" * 100_000,
        "<nav>" * 100_000 + "text", "<!--" * 100_000, "<a x=" * 100_000, "<p" + " x=1" * 200_000,
    ], ids=["open-tags", "attributes", "open-quote", "scripts", "navs", "comments", "equals", "long-tag"])
    def test_visible_text_is_linear(self, hostile: str) -> None:
        start = time.perf_counter()
        visible_text(hostile)
        assert time.perf_counter() - start < 2.0


# --- odd types that are text ---------------------------------------------------------


class TestOddTypesThatAreText:
    def test_a_type_without_extractor_is_read_as_text(self, pm) -> None:
        """libmagic's system database calls some text HP-GL (two capitals and a semicolon-free start)."""
        data = ("PS Utilities Package\n\n" + PROTECTED).encode()
        result = extract_bytes(data, "application/vnd.hp-hpgl", pm)
        assert result.status is TextStatus.OK and result.text == data.decode()
        assert result.meta["read_as"] == "text/plain (typed application/vnd.hp-hpgl)"

    def test_binary_without_extractor_stays_unsupported(self, pm) -> None:
        program = b"MZ\x90\x00\x03\x00\x00\x00" + bytes(range(256)) * 16  # a Windows executable's bytes
        mime = detect_mime(program)
        assert mime == "application/x-dosexec"
        result = extract_bytes(program, mime, pm)
        assert result.status is TextStatus.UNSUPPORTED and result.text == "" and mime in result.reason

    def test_octet_stream_that_decodes_is_text(self, pm, tmp_path: Path) -> None:
        path = tmp_path / "notes.txt"
        path.write_bytes(b"\x01\x02\x03 " + PROTECTED.encode())
        record, result = extract_file(path, pm)
        assert record.mime == "text/plain" and result.status is TextStatus.OK


# --- end to end -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def protected_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lossless")
    share = root / "protected"
    share.mkdir()
    (share / "board-minutes.txt").write_text(PROTECTED)
    db = root / "case.db"
    done = run_cli("scan", str(share), "--index", str(db), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files_indexed"] == 1
    return db


class TestEndToEnd:
    def test_check_finds_the_excerpt_in_a_man_page(self, protected_index: Path, tmp_path: Path) -> None:
        page = tmp_path / "perf-script.1.txt"
        page.write_text(man_page(excerpt(PROTECTED)))
        assert detect_mime(page.read_bytes()) == "text/plain"
        done = run_cli("check", str(page), "--index", str(protected_index), "--json")
        assert done.returncode in (0, 1), done.stderr  # 1 only when a match is over the resemblance threshold
        matches = json.loads(done.stdout)["results"][0]["matches"]
        assert [Path(m["path"]).name for m in matches] == ["board-minutes.txt"]
        longest = max(matches[0]["passages"], key=lambda p: len(p["text"]))
        assert len(longest["text"].split()) >= 0.8 * len(excerpt(PROTECTED).split())
        assert contains_run(excerpt(PROTECTED), longest["text"])

    def test_check_finds_the_excerpt_in_an_html_page_with_an_unclosed_script(self, protected_index: Path,
                                                                              tmp_path: Path) -> None:
        page = tmp_path / "page.html"
        page.write_text("<!DOCTYPE html><html><head><title>x</title></head><body><p>Intro.</p>"
                        "<script>var a = 1;\n<p>" + excerpt(PROTECTED) + "</p></body></html>")
        done = run_cli("check", str(page), "--index", str(protected_index), "--json")
        assert done.returncode in (0, 1), done.stderr
        assert json.loads(done.stdout)["results"][0]["matches"][0]["passages"]

    def test_watch_check_alerts_on_the_man_page(self, protected_index: Path, tmp_path: Path, pm) -> None:
        from scanner.services.watch.checking import check_file
        from scanner.services.watch.records import WatchOptions

        page = tmp_path / "git-checkout.1.txt"
        page.write_text(man_page(excerpt(PROTECTED)))
        with Index.open(protected_index) as index:
            checked = check_file(str(page), index, pm, WatchOptions())
        assert checked.status == "ok" and checked.matches
        assert Path(checked.matches[0]["path"]).name == "board-minutes.txt"

    def test_scan_records_partial_with_its_reason(self, lossy_pm, tmp_path: Path) -> None:
        share = tmp_path / "share"
        share.mkdir()
        (share / "page.html").write_text("<p>A title</p>\n<p>" + PROTECTED.replace("\n", "</p>\n<p>") + "</p>")
        db = tmp_path / "i.db"
        with Index.open(db, readonly=False, params=Params()) as index:
            result = run_scan([str(share)], index, lossy_pm, Params(), jobs=0)
        assert [(Path(p.path).name, p.status) for p in result.partial] == [("page.html", "partial")]
        with sqlite3.connect(db) as con:
            status, reason, doc_id = con.execute("SELECT status, reason, doc_id FROM files").fetchone()
            doc_status = con.execute("SELECT status FROM documents WHERE id = ?", (doc_id,)).fetchone()[0]
        assert status == "partial" and "lossy extractor kept" in reason
        assert doc_status == "ok"  # the document is sketched, paired and matched like any other

    def test_a_copy_of_a_partial_file_is_partial_too(self, lossy_pm, tmp_path: Path) -> None:
        """A byte-identical copy loses the same words: found in the same run or a later one, it says so."""
        share = tmp_path / "share"
        share.mkdir()
        page = "<p>A title</p>\n<p>" + PROTECTED.replace("\n", "</p>\n<p>") + "</p>"
        (share / "page.html").write_text(page)
        (share / "same-run-copy.html").write_text(page)
        db = tmp_path / "i.db"
        with Index.open(db, readonly=False, params=Params()) as index:
            run_scan([str(share)], index, lossy_pm, Params(), jobs=0)
        (share / "later-copy.html").write_text(page)
        with Index.open(db, readonly=False, params=Params()) as index:
            result = run_scan([str(share)], index, lossy_pm, Params(), jobs=0)
        assert [Path(p.path).name for p in result.partial] == ["later-copy.html", "page.html", "same-run-copy.html"]
        with sqlite3.connect(db) as con:
            rows = con.execute("SELECT path, status, reason FROM files ORDER BY path").fetchall()
        assert [(Path(path).name, status) for path, status, _ in rows] == [
            ("later-copy.html", "partial"), ("page.html", "partial"), ("same-run-copy.html", "partial")]
        assert len({reason for _, _, reason in rows}) == 1 and "lossy extractor kept" in rows[0][2]
