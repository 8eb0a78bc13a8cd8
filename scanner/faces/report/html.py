"""One self-contained HTML page: readable in any browser, years later, without the tool.

Documents are hostile input. Every piece of document text and every path
goes through `_e` (html.escape with quote=True, control characters made
visible), the only attribute values are numbers and ids this module makes,
and a Content-Security-Policy forbids scripts, network and frames even if
escaping were ever missed. No JavaScript is needed: folding uses <details>.
"""

from __future__ import annotations

import html
import math
import re

from scanner.faces.report.model import ClusterInfo, Pair, PairPassage, Report, Side
from scanner.services.findings import common_note

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
PASSAGES_SHOWN = 30  # per pair; the JSON report has them all
CONTEXT = 80  # characters of text shown around a passage
PASSAGE_SHOWN = 4000  # characters of one passage shown; the rest is summarised
# pairs shown in each section (suspected pairs, shared passages), the first in their order; the JSON and CSV
# reports list them all (a folder of licence and changelog files has 150,000 pairs sharing passages: no page
# a person reads, and one that would not fit in memory)
PAIRS_SHOWN = 2000

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:80em;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ddd;padding:.3em .5em;text-align:left;
vertical-align:top}th{background:#f3f3f3}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.pair{border:1px solid #ccc;margin:1em 0;padding:.3em 1em;border-radius:4px}
.side{display:grid;grid-template-columns:1fr 1fr;gap:1em}
.side pre{white-space:pre-wrap;word-break:break-word;background:#fafafa;padding:.5em;border:1px solid #eee;
max-height:24em;overflow:auto;margin:.3em 0}
mark{background:#ffe066}mark.rw{background:#bde0fe}mark.sem{background:#e4c1f9}.small{color:#666;font-size:.9em}code,.hash{word-break:break-all}
.hash{font-family:monospace;font-size:.85em;color:#555}
.bar{background:#d33;height:.8em;display:inline-block;vertical-align:middle}
.track{background:#eee;width:10em;display:inline-block;vertical-align:middle}
.evidence{background:#f7f7f2;border:1px solid #e3e3d8;padding:.5em 1em}
.kind{font-size:.8em;padding:.1em .4em;border-radius:3px;background:#eee}.kind.rw{background:#bde0fe}
.kind.sem{background:#e4c1f9}
.kind.ocr{background:#ffe5b4}.kind.hid{background:#f6c6c6}
@media print{.side pre{max-height:none}}
"""


def _e(value: object) -> str:
    """Escape for text and quoted attributes; control characters become U+FFFD so nothing hides."""
    return html.escape(_CONTROL.sub("\ufffd", str(value)), quote=True)


def _pct(value: float | None, error: float | None = None) -> str:
    """A share in percent, with its 95 % error when it is an estimate."""
    if value is None or math.isnan(value):
        return "n/a"
    if error is None or math.isnan(error) or error <= 0:
        return f"{100 * value:.1f}%"
    return f"{100 * value:.1f}%&thinsp;±&thinsp;{100 * error:.1f}"


def _bar(share: float) -> str:
    width = max(0.0, min(1.0, share)) * 10
    return f'<span class=track><span class=bar style="width:{width:.2f}em"></span></span>'


def histogram_svg(pairs: tuple[Pair, ...], bins: int = 10) -> str:
    """Inline SVG of the score distribution: resemblance and the larger containment, side by side per bin."""
    series = [("resemblance", "#4a7", [p.resemblance for p in pairs]),
              ("containment (larger way)", "#e80",
               [max(p.containment_a_in_b, p.containment_b_in_a) for p in pairs])]
    counts = []
    for _, _, values in series:
        row = [0] * bins
        for v in values:
            if not math.isnan(v):
                row[min(int(v * bins), bins - 1)] += 1
        counts.append(row)
    top = max((c for row in counts for c in row), default=0) or 1
    width, height, slot = 40 + bins * 36, 170, 36
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="score distribution of the suspected pairs" font-family="sans-serif" font-size="9">',
             f'<line x1="30" y1="130" x2="{30 + bins * slot}" y2="130" stroke="#999"/>']
    for i in range(bins):
        x0 = 30 + i * slot
        for j, (_, colour, _) in enumerate(series):
            c = counts[j][i]
            h = 110 * c / top
            x = x0 + 4 + j * 14
            parts.append(f'<rect x="{x}" y="{130 - h:.1f}" width="13" height="{h:.1f}" fill="{colour}"/>')
            if c:
                parts.append(f'<text x="{x + 6.5}" y="{126 - h:.1f}" text-anchor="middle">{c}</text>')
        parts.append(f'<text x="{x0 + 16}" y="142" text-anchor="middle">{i / bins:.1f}</text>')
    for j, (name, colour, _) in enumerate(series):
        parts.append(f'<rect x="{30 + j * 170}" y="152" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{44 + j * 170}" y="161">{_e(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


_MARK_CLASS = {"reworded": "rw", "semantic": "sem"}  # passage kind -> its own highlight colour


def _context(text: str | None, start: int, end: int, fallback: str, kind: str = "verbatim") -> str:
    """The passage highlighted with some text either side; all of it escaped. A reworded or semantic passage
    is highlighted in a colour of its own: its two sides say the same in other words, they are no verbatim copy."""
    mark_class = _MARK_CLASS.get(kind)
    mark = f"<mark class={mark_class}>" if mark_class else "<mark>"
    if text is None:
        return f"{mark}{_e(fallback)}</mark>"
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    before = text[max(0, start - CONTEXT):start]
    after = text[end:end + CONTEXT]
    body = text[start:end]
    if len(body) > PASSAGE_SHOWN:
        half = PASSAGE_SHOWN // 2
        body_html = (f"{_e(body[:half])}</mark> <em>[… {len(body) - 2 * half:,} characters …]</em> "
                     f"{mark}{_e(body[-half:])}")
    else:
        body_html = _e(body)
    return (f"{'…' if start > CONTEXT else ''}{_e(before)}{mark}{body_html}</mark>{_e(after)}"
            f"{'…' if end + CONTEXT < len(text) else ''}")


def _side_head(label: str, side: Side) -> str:
    ocr = " <span class='kind ocr'>OCR text</span>" if side.ocr else ""
    return f"<b>{label}</b> <code>{_e(side.path)}</code>{ocr}<br><span class=hash>SHA-256 {_e(side.sha256)}</span>"


def _found_in(place: str) -> str:
    """Where a side's passage lies when not in its body: hidden or out-of-flow text is evidence, and someone
    opening the file would not find it on the page."""
    return f" <span class='kind hid'>in {_e(place)}</span>" if place else ""


def _passage_kind(passage: PairPassage) -> str:
    """The label every passage carries: how it was found, so a reworded or semantic one never reads as a copy."""
    if passage.kind == "reworded":
        what = "a summary of much longer text" if passage.condenses else "the same sentences in other words"
        return f"<span class='kind rw'>reworded: {what}, not a verbatim copy</span>"
    if passage.kind == "semantic":
        similarity = "" if passage.similarity is None else f" (similarity {round(passage.similarity, 3):g})"
        return (f"<span class='kind sem'>semantic: the same meaning in other words{similarity}, "
                "not a verbatim copy</span>")
    return f"<span class=kind>{_e(passage.kind)}</span>"


def _pair_html(number: int, pair: Pair, report: Report) -> str:
    edit = "n/a" if pair.edit_distance_estimate is None else f"{pair.edit_distance_estimate:,}"
    reworded, semantic = pair.reworded, pair.semantic
    shared = "" if pair.shared_words is None else f" · <b>{pair.shared_words:,}</b> words shared"
    out = [f'<div class=pair id="pair-{number}"><h3>{number}. <span class=kind>{_e(pair.kind)}</span> '
           f"score {_pct(pair.score)}</h3>",
           f"<div class=side><div>{_side_head('A', pair.a)}</div><div>{_side_head('B', pair.b)}</div></div>",
           f"<p>resemblance {_pct(pair.resemblance, pair.resemblance_error)} · A in B "
           f"{_pct(pair.containment_a_in_b, pair.containment_a_in_b_error)} · B in A "
           f"{_pct(pair.containment_b_in_a, pair.containment_b_in_a_error)} ({_e(pair.measure)}) · "
           f"estimated edit distance <b>{edit}</b> characters · {len(pair.passages)} shared passage(s)"
           f"{f' ({reworded} reworded)' if reworded else ''}{f' ({semantic} semantic)' if semantic else ''}"
           f"{shared}</p>"]
    if pair.kind == "identical":
        out.append("<p class=small>Byte-identical files (same SHA-256): the whole text is shared.</p>")
    elif pair.measure == "estimate":  # no passages shown is not "none shared"
        out.append("<p class=small>The index keeps no text of this pair (scanned with --no-text): no passage is "
                   "looked for, and its measures are estimated from sketches, with their 95 % error.</p>")
    ocr = [label for label, side in (("A", pair.a), ("B", pair.b)) if side.ocr]
    if ocr and pair.passages:
        out.append(f"<p class=small><span class='kind ocr'>OCR text</span> {' and '.join(ocr)} read from images: "
                   "its passages are what the OCR read, to be compared with the page itself.</p>")
    text_a, text_b = report.texts.get(pair.a.sha256), report.texts.get(pair.b.sha256)
    for p in pair.passages[:PASSAGES_SHOWN]:
        out.append(f"<p class=small>{_passage_kind(p)}</p>"
                   f"<div class=side><pre><span class=small>A [{p.a_start}:{p.a_end}]{_found_in(p.found_in_a)}</span>\n"
                   f"{_context(text_a, p.a_start, p.a_end, p.text, p.kind)}</pre>"
                   f"<pre><span class=small>B [{p.b_start}:{p.b_end}]{_found_in(p.found_in_b)}</span>\n"
                   f"{_context(text_b, p.b_start, p.b_end, p.text_b, p.kind)}</pre></div>")
    if len(pair.passages) > PASSAGES_SHOWN:
        out.append(f"<p class=small>… {len(pair.passages) - PASSAGES_SHOWN} more passages: see the JSON report.</p>")
    out.append("</div>")
    return "".join(out)


def _clusters_html(clusters: tuple[ClusterInfo, ...]) -> str:
    if not clusters:
        return "<h2>Clusters</h2><p>No cluster of near-duplicates.</p>"
    rows = []
    for c in clusters:
        members = "<br>".join(f"<code>{_e(m.path)}</code> <span class=hash>{_e(m.sha256)}</span>" for m in c.members)
        low = "" if c.min_resemblance is None else _pct(c.min_resemblance, c.min_resemblance_error)
        rows.append(f"<tr><td class=num>{c.id}</td><td>{_e(c.kind)}</td><td class=num>{len(c.members)}</td>"
                    f"<td class=num>{low}</td><td>{members}</td></tr>")
    return ("<h2>Clusters</h2><table><tr><th>id</th><th>kind</th><th>files</th><th>lowest resemblance</th>"
            "<th>members (path, SHA-256)</th></tr>" + "".join(rows) + "</table>")


def _more_pairs(count: int) -> str:
    """The line saying how many pairs of a section are past PAIRS_SHOWN, and where they are."""
    if count <= PAIRS_SHOWN:
        return ""
    return (f"<p class=more-pairs><b>{count - PAIRS_SHOWN:,} more pairs</b> of this kind are not shown here (the first"
            f" {PAIRS_SHOWN:,} are); the JSON and CSV reports list all {count:,}.</p>")


def render_html(report: Report) -> str:
    s = report.summary
    numbered = list(enumerate(report.pairs, 1))
    suspected = [(i, pair) for i, pair in numbered if pair.kind != "passages"]
    sharing = [(i, pair) for i, pair in numbered if pair.kind == "passages"]
    anchors: dict[tuple[str, str], int] = {}  # a document's first pair on the page
    for i, pair in sorted(suspected[:PAIRS_SHOWN] + sharing[:PAIRS_SHOWN], key=lambda item: item[0]):
        for side in (pair.a, pair.b):
            anchors.setdefault((side.path, side.sha256), i)
    selection = report.selection
    scope = ("the whole index" if selection.get("mode") == "index"
             else f"the matches of <code>{_e((selection.get('check') or {}).get('path', ''))}</code>")
    summary_rows = [("files", s["files"]), ("documents in the index", s["documents"]), ("clusters", s["clusters"]),
                    ("suspected copies (pairs)", s["suspected_copies"]), ("identical", s["identical"]),
                    ("near-duplicates", s["near_duplicates"]), ("containments", s["containments"]),
                    ("matches of the checked document", s["check_matches"]),
                    ("pairs sharing passages", s.get("passages_pairs", 0)),
                    ("reworded passages", s.get("reworded_passages", 0)),
                    ("semantic passages (alike in meaning, not copies)", s.get("semantic_passages", 0)),
                    ("documents with text found elsewhere", s["documents_with_findings"])]
    min_words, min_share = selection.get("min_words"), selection.get("min_share") or 0.0
    passages_note = ""
    if min_words is not None:
        passages_note += f" Passages pairs and documents count shared passages of at least {_e(min_words)} words."
    if min_share:
        passages_note += f" Only documents with at least {_pct(min_share)} found elsewhere are listed."
    base = selection.get("base") or []
    if base:
        passages_note += (f" Base text left out of every finding ({len(base)} text(s), "
                          f"{sum(b['words'] for b in base)} words): "
                          + "; ".join(f"<code>{_e(b['label'])}</code> <span class=hash>{_e(b['sha256'])}</span>"
                                      for b in base) + ".")
    unaligned = s.get("unaligned_documents", 0)
    if unaligned:
        passages_note += (f" <b>{unaligned} document(s) are not aligned yet</b> (scan again): their passages are"
                          " missing.")
    out = [f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_e(CSP)}">
<meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>scanner report</title><style>{_CSS}</style></head><body>
<h1>scanner report</h1>
<p class=small>Similarity findings over {scope}. Self-contained: this page loads nothing and runs no script.</p>
<div class=evidence id=evidence><p>Generated <b>{_e(report.generated_at)}</b> by scanner {_e(report.version)}
from index <code>{_e(report.index)}</code>, at resemblance threshold {_e(selection.get('threshold'))} and
containment threshold {_e(selection.get('min_containment'))}.{passages_note}<br>
Re-create it with: <code id=command>{_e(report.command)}</code><br>
Detection guarantee: <b id=guarantee>{_e(report.guarantee)}</b>. Offsets are characters of the extracted text;
the estimated edit distance is Coates' signature estimate.</p></div>
<h2>Summary</h2><div class=side><table id=summary>"""]
    out += [f"<tr><th>{_e(name)}</th><td class=num>{value}</td></tr>" for name, value in summary_rows]
    out.append(f"</table><div>{histogram_svg(report.pairs)}<p class=small>Score distribution of the suspected "
               "pairs.</p></div></div>")
    out.append("<h2>Documents: how much is found elsewhere</h2>")
    if report.documents:
        out.append("<table id=documents><tr><th>document</th><th>found elsewhere</th><th>sources</th>"
                   "<th>by source</th></tr>")
        for d in report.documents:
            sources = "<br>".join(f"{_pct(src.share)} <code>{_e(src.path)}</code>" for src in d.by_source[:10])
            if len(d.by_source) > 10:
                sources += f"<br>… {len(d.by_source) - 10} more"
            link = anchors.get((d.path, d.sha256))
            name = f"<code>{_e(d.path)}</code>" + (f' <a href="#pair-{link}">pairs</a>' if link else "")
            common = f"<br><span class=small>very common text: {_pct(d.common_share)}</span>" if d.common_share else ""
            found = (f"found in {d.sources} source{'s' if d.sources != 1 else ''}" if d.sources
                     else "found in no other document")
            out.append(f"<tr><td>{name}<br><span class=hash>{_e(d.sha256)}</span></td>"
                       f"<td class=num>{_bar(d.share)} <b>{_pct(d.share)}</b> {found}{common}</td>"
                       f"<td class=num>{d.sources}</td><td>{sources}</td></tr>")
        out.append("</table>")
    else:
        out.append("<p>No document shares text with another.</p>")
    note = common_note(report.summary.get("very_common_documents", 0), selection.get("very_common_limit"))
    if note:
        out.append(f"<p class=small id=very-common>{_e(note)}</p>")
    if selection.get("template_note"):
        out.append(f"<p id=template-note><b>{_e(selection['template_note'])}</b></p>")
    out.append(_clusters_html(report.clusters))
    out.append("<h2>Suspected pairs</h2>")
    if not suspected:
        out.append("<p>No pair above the thresholds.</p>")
    out += [_pair_html(i, pair, report) for i, pair in suspected[:PAIRS_SHOWN]]
    out.append(_more_pairs(len(suspected)))
    if sharing or selection.get("mode") == "index":
        out.append("<h2 id=passages>Shared passages</h2><p class=small>Pairs of documents sharing passages that"
                   " no pair above reports, most shared words first. Which one took the text from the other cannot"
                   " be told from the texts: B is the one the passages make up more of.</p>")
        if not sharing:
            out.append("<p>No other pair of documents shares a passage.</p>")
        out += [_pair_html(i, pair, report) for i, pair in sharing[:PAIRS_SHOWN]]
        out.append(_more_pairs(len(sharing)))
    out.append("<h2>Evidence: files</h2><table id=files><tr><th>path</th><th>SHA-256</th><th>size (bytes)</th>"
               "<th>mtime (UTC)</th><th>type</th><th>status</th></tr>")
    for f in report.files:
        status = f.status + (f": {f.reason}" if f.reason else "")
        out.append(f"<tr><td><code>{_e(f.path)}</code></td><td class=hash>{_e(f.sha256)}</td>"
                   f"<td class=num>{f.size}</td><td>{_e(f.mtime)}</td><td>{_e(f.mime)}</td><td>{_e(status)}</td></tr>")
    out.append("</table><h2>Parameters</h2><table id=params>")
    out += [f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in report.params.items()]
    out.append(f"</table><p class=small>Report schema version {report.schema_version}.</p></body></html>\n")
    return "".join(out)
