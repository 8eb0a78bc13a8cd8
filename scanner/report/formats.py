"""Renderers of a `Report`: self-contained HTML, JSON, CSV and PAN XML.

Document text and paths are hostile input: HTML escapes every one of them
(and forbids scripts by Content-Security-Policy besides), CSV neutralizes
spreadsheet formulas, PAN file names are reduced to safe base names.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from scanner.report.model import Pair, Report

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:78em;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ddd;padding:.3em .5em;text-align:left;vertical-align:top}th{background:#f3f3f3}
.num{text-align:right;font-variant-numeric:tabular-nums}.pair{border:1px solid #ccc;margin:1em 0;padding:.5em 1em}
.side{display:grid;grid-template-columns:1fr 1fr;gap:1em}.side pre{white-space:pre-wrap;background:#fafafa;
padding:.5em;border:1px solid #eee;max-height:20em;overflow:auto}mark{background:#ffe066}
.small{color:#666;font-size:.9em}code{word-break:break-all}.bar{background:#4a7;height:.8em;display:inline-block}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _pct(value: float) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f}%"


def _histogram_svg(values: list[float], bins: int = 10) -> str:
    counts = [0] * bins
    for v in values:
        if not math.isnan(v):
            counts[min(int(v * bins), bins - 1)] += 1
    top = max(counts) or 1
    bars = []
    for i, c in enumerate(counts):
        h = 100 * c / top
        bars.append(f'<rect x="{i * 30 + 5}" y="{110 - h:.1f}" width="24" height="{h:.1f}" fill="#4a7"/>'
                    f'<text x="{i * 30 + 17}" y="124" font-size="9" text-anchor="middle">{i / bins:.1f}</text>'
                    f'<text x="{i * 30 + 17}" y="{106 - h:.1f}" font-size="9" text-anchor="middle">{c}</text>')
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="310" height="130" role="img" '
            'aria-label="resemblance of suspected pairs">' + "".join(bars) + "</svg>")


def _context(text: str, start: int, end: int, context: int = 80) -> str:
    before = text[max(0, start - context):start]
    after = text[end:end + context]
    return f"{'…' if start > context else ''}{_e(before)}<mark>{_e(text[start:end])}</mark>{_e(after)}…"


def render_html(report: Report) -> str:
    s = report.summary
    rows = "".join(f"<tr><th>{_e(k.replace('_', ' '))}</th><td class=num>{_e(v)}</td></tr>" for k, v in s.items())
    params = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in report.params.items())
    out = [f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<meta name="referrer" content="no-referrer"><title>scanner report</title><style>{_CSS}</style></head><body>
<h1>scanner report</h1>
<p class=small>Generated {_e(report.generated_at)} by scanner {_e(report.version)} from index <code>{_e(report.index)}</code>.
Re-create with <code>{_e(report.command)}</code>. Detection guarantee: {_e(report.guarantee)}.</p>
<h2>Summary</h2><div class=side><table>{rows}</table><div>{_histogram_svg([p.resemblance for p in report.pairs])}
<p class=small>Resemblance of the suspected pairs.</p></div></div>"""]
    if report.documents:
        out.append("<h2>Documents: how much is found elsewhere</h2><table><tr><th>document</th><th>found in other "
                   "documents</th><th>sources</th></tr>")
        for d in report.documents:
            out.append(f"<tr><td><code>{_e(d.path)}</code></td><td class=num><span class=bar style=\"width:"
                       f"{100 * d.share:.0f}px\"></span> {_pct(d.share)}</td><td class=num>{d.sources}</td></tr>")
        out.append("</table>")
    if report.clusters:
        out.append("<h2>Clusters</h2><table><tr><th>id</th><th>kind</th><th>members (path, SHA-256)</th></tr>")
        for c in report.clusters:
            members = "<br>".join(f"<code>{_e(m['path'])}</code> <span class=small>{_e(m['sha256'])}</span>"
                                  for m in c["members"])
            out.append(f"<tr><td>{_e(c['id'])}</td><td>{_e(c['kind'])}</td><td>{members}</td></tr>")
        out.append("</table>")
    out.append("<h2>Suspected pairs</h2>")
    for i, pair in enumerate(report.pairs, 1):
        out.append(_pair_html(i, pair, report))
    out.append("<h2>Evidence: files</h2><table><tr><th>path</th><th>SHA-256</th><th>size</th><th>mtime (UTC)</th>"
               "<th>type</th><th>status</th></tr>")
    for f in report.files:
        status = f.status + (f": {f.reason}" if f.reason else "")
        out.append(f"<tr><td><code>{_e(f.path)}</code></td><td><code>{_e(f.sha256)}</code></td>"
                   f"<td class=num>{f.size}</td><td>{_e(f.mtime)}</td><td>{_e(f.mime)}</td><td>{_e(status)}</td></tr>")
    out.append(f"</table><h2>Parameters</h2><table>{params}</table></body></html>\n")
    return "".join(out)


def _pair_html(number: int, pair: Pair, report: Report) -> str:
    edit = "n/a" if pair.edit_distance_estimate is None else f"{pair.edit_distance_estimate:,}"
    head = (f'<div class=pair id="pair-{number}"><h3>{number}. {_e(pair.kind)}</h3>'
            f"<p><code>{_e(pair.a.path)}</code> <span class=small>{_e(pair.a.sha256)}</span><br>"
            f"<code>{_e(pair.b.path)}</code> <span class=small>{_e(pair.b.sha256)}</span></p>"
            f"<p>resemblance {_pct(pair.resemblance)} · A in B {_pct(pair.containment_a_in_b)} · "
            f"B in A {_pct(pair.containment_b_in_a)} · estimated edit distance {edit} characters · "
            f"{len(pair.passages)} shared passage(s)</p>")
    text_a, text_b = report.texts.get(pair.a.sha256), report.texts.get(pair.b.sha256)
    body = []
    for p in pair.passages[:20]:
        left = _context(text_a, p.a_start, p.a_end) if text_a is not None else _e(p.text)
        right = _context(text_b, p.b_start, p.b_end) if text_b is not None else ""
        body.append(f"<div class=side><pre>[{p.a_start}:{p.a_end}] {left}</pre>"
                    f"<pre>[{p.b_start}:{p.b_end}] {right}</pre></div>")
    if len(pair.passages) > 20:
        body.append(f"<p class=small>… {len(pair.passages) - 20} more passages in the JSON report.</p>")
    return head + "".join(body) + "</div>"


def _no_nan(value: object) -> object:
    """JSON has no NaN: metrics that could not be computed (no stored text) become null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(v) for v in value]
    return value


def render_json(report: Report) -> str:
    return json.dumps(_no_nan(report.to_json()), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


CSV_FIELDS = ("kind", "path_a", "sha256_a", "path_b", "sha256_b", "resemblance", "containment_a_in_b",
              "containment_b_in_a", "edit_distance_estimate", "passages")


def _cell(value: object) -> str:
    text = "" if value is None else (f"{value:.6f}" if isinstance(value, float) and not math.isnan(value)
                                     else ("" if isinstance(value, float) else str(value)))
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def render_csv(report: Report) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_FIELDS)
    for p in report.pairs:
        writer.writerow([_cell(v) for v in (p.kind, p.a.path, p.a.sha256, p.b.path, p.b.sha256, p.resemblance,
                                            p.containment_a_in_b, p.containment_b_in_a, p.edit_distance_estimate,
                                            len(p.passages))])
    return buffer.getvalue()


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(path: str, taken: set[str]) -> str:
    """A base name that cannot leave the output folder (no separators, '..' or NUL), unique in `taken`."""
    base = _UNSAFE.sub("_", Path(path.replace("\\", "/")).name).strip("._") or "document"
    stem, number = base[:120], 1
    name = f"{stem}.xml"
    while name in taken:
        number += 1
        name = f"{stem}-{number}.xml"
    taken.add(name)
    return name


def render_pan(report: Report) -> dict[str, str]:
    """One PAN text-alignment XML per suspicious document: {file name: xml}.

    The suspicious document is the one that took text in: the checked file,
    a containment's container, a near-duplicate pair's second member.
    """
    by_suspicious: dict[str, list[tuple[Pair, bool]]] = {}
    for pair in report.pairs:
        if pair.kind == "identical" or not pair.passages:
            continue
        suspicious_is_a = pair.kind == "check"
        key = pair.a.path if suspicious_is_a else pair.b.path
        by_suspicious.setdefault(key, []).append((pair, suspicious_is_a))
    out: dict[str, str] = {}
    taken: set[str] = set()
    for suspicious, items in sorted(by_suspicious.items()):
        root = ET.Element("document", reference=Path(suspicious).name)
        for pair, suspicious_is_a in items:
            source = pair.b if suspicious_is_a else pair.a
            for p in pair.passages:
                this = (p.a_start, p.a_end) if suspicious_is_a else (p.b_start, p.b_end)
                other = (p.b_start, p.b_end) if suspicious_is_a else (p.a_start, p.a_end)
                ET.SubElement(root, "feature", name="detected-plagiarism", this_offset=str(this[0]),
                              this_length=str(this[1] - this[0]), source_reference=Path(source.path).name,
                              source_offset=str(other[0]), source_length=str(other[1] - other[0]))
        ET.indent(root)
        out[safe_name(suspicious, taken)] = ET.tostring(root, encoding="unicode") + "\n"
    return out
