"""A passage found where a reader does not look is reported with its place (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

from clirun import REPO, run_cli

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
