"""A passage found where a reader does not look is reported with its place (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

from carriers import CARRIERS
from clirun import REPO, run_cli

from scanner.faces.tui.model import pair_from_index
from scanner.index import Index

DECLARATION = REPO / "sample_corpus" / "originals" / "declaration-of-independence.txt"


def test_check_says_the_leak_was_in_a_comment_a_footer_or_an_attachment(tmp_path: Path) -> None:
    protected = tmp_path / "protected"
    protected.mkdir()
    (protected / "declaration.txt").write_bytes(DECLARATION.read_bytes())
    db = tmp_path / "p.db"
    assert run_cli("scan", str(protected), "--index", str(db), "--jobs", "0").returncode == 0
    text = DECLARATION.read_text(encoding="utf-8")
    leak = text[text.index("We hold these truths"):][:900]
    body = "<p>" + "An ordinary newsletter about the harbour, the weather and the boats. " * 8 + "</p>"
    pages = {
        "comment.html": f"<html><body>{body}<!-- {leak} --></body></html>",
        "footer.html": f"<html><body><main>{body}</main><footer>{leak}</footer></body></html>",
        "visible.html": f"<html><body>{body}<p>{leak}</p></body></html>",
    }
    for name, page in pages.items():
        (tmp_path / name).write_text(page, encoding="utf-8")
    done = run_cli("check", *(str(tmp_path / n) for n in pages), "--index", str(db), "--json")
    assert done.returncode == 1, done.stderr
    places = {}
    for result in json.loads(done.stdout)["results"]:
        passages = [p for m in result["matches"] for p in m["passages"]]
        assert passages, result["query"]
        places[Path(result["query"]).name] = {p.get("found_in", "") for p in passages}
    assert places == {"comment.html": {"an HTML comment"}, "footer.html": {"<footer>"}, "visible.html": {""}}
    shown = run_cli("check", str(tmp_path / "comment.html"), "--index", str(db))
    assert "in an HTML comment" in shown.stdout


def test_a_passage_in_an_indexed_file_says_where_in_it_too(tmp_path: Path) -> None:
    """The index keeps each document's places (migration 13): a scan's passage pair, the report and `check`
    say that the copy sits in the indexed Word file's hidden text or in an HTML page's comment, where someone
    opening the file would not find it on the page."""
    text = DECLARATION.read_text(encoding="utf-8")
    leak = text[text.index("We hold these truths"):][:1200]
    folder = tmp_path / "essays"
    folder.mkdir()
    (folder / "hidden.docx").write_bytes(CARRIERS["docx-hidden"](leak, 2).data)
    (folder / "comment.html").write_text("<html><body><p>" + "A page about the harbour and its boats. " * 12
                                         + f"</p><!-- {leak} --></body></html>", encoding="utf-8")
    (folder / "declaration.txt").write_bytes(DECLARATION.read_bytes())
    db = tmp_path / "i.db"
    assert run_cli("scan", str(folder), "--index", str(db), "--jobs", "0", "--quiet").returncode == 0
    report = tmp_path / "r.json"
    done = run_cli("report", "--index", str(db), "--format", "json", "--output", str(report))
    assert done.returncode == 0, done.stderr
    places: dict[str, set[str]] = {}
    for pair in json.loads(report.read_text())["pairs"]:
        for side, key in (("a", "found_in_a"), ("b", "found_in_b")):
            places.setdefault(Path(pair[side]["path"]).name, set()).update(
                p.get(key, "") for p in pair["passages"])
    assert places["hidden.docx"] == {"hidden text"} and places["comment.html"] == {"an HTML comment"}
    assert places["declaration.txt"] == {""}
    hidden_pair = next(pair for pair in json.loads(report.read_text())["pairs"]
                       if {Path(pair[s]["path"]).name for s in "ab"} == {"hidden.docx", "declaration.txt"})
    with Index.open(db) as index:  # the TUI's pair view says it in its status line
        view = pair_from_index(index, index.params, hidden_pair["a"]["path"], hidden_pair["a"]["sha256"],
                               hidden_pair["b"]["path"], hidden_pair["b"]["sha256"])
    assert view is not None and view.passages
    side = "A" if Path(hidden_pair["a"]["path"]).name == "hidden.docx" else "B"
    assert {view.where(k) for k in range(len(view.passages))} == {f"; {side} in hidden text"}
    html = tmp_path / "r.html"
    assert run_cli("report", "--index", str(db), "--format", "html", "--output", str(html)).returncode == 0
    assert "in hidden text</span>" in html.read_text(encoding="utf-8")
    query = tmp_path / "q.txt"
    query.write_text(leak, encoding="utf-8")
    checked = json.loads(run_cli("check", str(query), "--index", str(db), "--json").stdout)
    found = {Path(m["path"]).name: {p.get("doc_found_in", "") for p in m["passages"]}
             for result in checked["results"] for m in result["matches"]}
    assert found["hidden.docx"] == {"hidden text"} and found["declaration.txt"] == {""}
