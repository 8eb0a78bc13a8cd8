"""What Outlook's message formats share: a message's text as Subject, From and body, the body plain, else
HTML, else the compressed RTF Outlook keeps alone for a message written in rich text ([MS-OXRTFCP], undone by
compressed-rtf, MIT); the RTF read as the RTF plugin reads a file; and a message written as MIME for the mail
reader (a store's messages, an attached Outlook item)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from urllib.parse import quote

from scanner.core.errors import ExtractionError
from scanner.core.model import Extracted, TextStatus
from scanner.sources.extract.encoding import decode_text
from scanner.sources.limits import ExtractLimits
from scanner_plugins.html import decode_html, html_to_text
from scanner_plugins.rtf import extract_rtf


def body_text(plain: str, html: bytes | str | None, rtf: Callable[[], bytes | None],
              limits: ExtractLimits) -> tuple[str, str]:
    """The body a reader sees, and why it is missing when it cannot be read: `plain` when it has words, else
    the HTML body's text, else the RTF body's (`rtf()`, decompressed; asked for only then)."""
    if plain.strip():
        return plain, ""
    if html:
        return html_to_text(html if isinstance(html, str) else decode_html(html)[0], limits)[0], ""
    try:
        document = rtf()
        return (extract_rtf(document, "text/rtf", limits).text if document else ""), ""
    except ExtractionError as exc:  # a compressed body that does not inflate, an RTF body that does not parse
        return "", exc.reason


def body_with_note(body: tuple[str, str]) -> str:
    """A body written into a mail (`mime_message`), what kept it from being read said in it: the mail's
    reader has no other way to know."""
    text, unread = body
    return "\n\n".join(part for part in (text, f"[the body is not read: {unread}]" if unread else "") if part)


def message_result(name: str, subject: str, sender: str, body: tuple[str, str], meta: dict[str, str]) -> Extracted:
    """The message's text (`message_text`); read in part, saying why, when its body could not be read."""
    text, unread = body
    return Extracted(text=message_text(subject, sender, text), extractor=name, meta=meta,
                     status=TextStatus.PARTIAL if unread else TextStatus.OK,
                     reason=f"the body is not read: {unread}" if unread else "")


def decompressed_rtf(compressed: bytes) -> bytes:
    """PR_RTF_COMPRESSED undone; a damaged one is `corrupt`, with its reason."""
    from compressed_rtf import decompress

    try:
        return bytes(decompress(compressed))
    except Exception as exc:  # the library raises bare Exceptions on a bad header or CRC
        raise ExtractionError(f"compressed RTF body unreadable: {exc}", status="corrupt") from exc


def eight_bit_text(raw: bytes) -> str:
    """A MAPI string in a code page (a PT_STRING8 property, a TNEF string attribute): its encoding detected
    (the terminating NULs off), else Latin-1, which reads any bytes."""
    try:
        return decode_text(raw.rstrip(b"\0"))[0]
    except ExtractionError:
        return raw.decode("latin-1")


def message_text(subject: str, sender: str, body: str) -> str:
    """Subject and From lines, a blank line, then the body (CRLF made LF), as `.eml` messages read."""
    lines = [f"Subject: {subject}"] * bool(subject) + [f"From: {sender}"] * bool(sender)
    return "\n".join([*lines, "", body.replace("\r\n", "\n").strip()]).strip()


_BOUNDARY = "=_outlook_part"  # every part is base64, whose alphabet has no "_": no part can hold the boundary


def mime_message(headers: list[tuple[str, str]], plain: str, html: bytes, attached: list[tuple[str, bytes]]) -> bytes:
    """An Outlook message as a MIME message the mail reader opens (a store's messages, an attached Outlook
    item), written directly: the plain body and the HTML one as alternatives, then the attachments, each part
    in base64. The email package's writer costs ~1 ms a message (its header objects), as much as libpff's
    reading a message out of a store."""
    lines = ["MIME-Version: 1.0", *(f"{header}: {_encoded_word(value)}" for header, value in headers),
             f'Content-Type: multipart/mixed; boundary="{_BOUNDARY}"', ""]
    parts = [("text/plain; charset=utf-8", "", plain.encode("utf-8"))]
    if html:
        parts.append(("text/html", "", html))
    if len(parts) == 2:
        inner = _BOUNDARY + "_alt"
        lines += [f"--{_BOUNDARY}", f'Content-Type: multipart/alternative; boundary="{inner}"', ""]
        lines += _parts(inner, parts)
        parts = []
    lines += _parts(_BOUNDARY, parts + [
        ("application/octet-stream", f"Content-Disposition: attachment; filename*=utf-8''{quote(label)}", content)
        for label, content in attached])
    return "\n".join(lines).encode("ascii")


def _parts(boundary: str, parts: list[tuple[str, str, bytes]]) -> list[str]:
    lines = []
    for content_type, disposition, payload in parts:
        lines += [f"--{boundary}", f"Content-Type: {content_type}", *([disposition] if disposition else []),
                  "Content-Transfer-Encoding: base64", "", base64.encodebytes(payload).decode("ascii")]
    return [*lines, f"--{boundary}--", ""]


def _encoded_word(value: str) -> str:
    """A header value as ASCII: each run of words beyond ASCII one RFC 2047 word of its UTF-8, the rest as it
    is (so an address after a name stays an address: "=?utf-8?b?Wm/Dqw==?= Ng <zoe@example.org>")."""
    if value.isascii():
        return value
    out: list[str] = []
    run: list[str] = []
    for word in [*value.split(" "), ""]:  # "": the end, which closes the last run
        if word and not word.isascii():
            run.append(word)
            continue
        if run:
            out.append(f"=?utf-8?b?{base64.b64encode(' '.join(run).encode('utf-8')).decode('ascii')}?=")
            run = []
        out.append(word)
    return " ".join(out[:-1])
