"""What the readers (extraction and its built-in plugins) have learnt to find, version by version.

An index records, with each file, the readers' version that read it. A rescan reads again the files
whose size or mtime moved, and those older readers found no text in (`services/scan/run.py
worth_reading_again`); a copy of known content takes the text its first reading gave, so a file with
text read by older readers keeps their text: a scan says how many such files lack what the readers now
find (`changes_missed`), and `scanner scan --rebuild` reads them again. Version 1 is every reader up to session
29 (comments, text boxes, headers, hidden and deleted text, form fields, attachments: an index from before
those says so through its schema, `Index.upgrade_note`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["READERS_VERSION", "READER_CHANGES", "ReaderChange", "changes_missed"]

_OFFICE = (
    "application/epub+zip",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.oasis.opendocument.text",
    "application/vnd.oasis.opendocument.presentation",
    "application/vnd.oasis.opendocument.spreadsheet",
)


# ODF kinds read since version 3 (the templates of the three kinds read before, drawings and theirs)
_ODF_NEW = tuple(f"application/vnd.oasis.opendocument.{kind}" for kind in (
    "text-template", "presentation-template", "spreadsheet-template", "text-master", "text-master-template",
    "graphics", "graphics-template"))


@dataclass(frozen=True)
class ReaderChange:
    """Readers' version `version` finds `what` in files of the MIME types `mimes`, which the one before missed."""

    version: int
    what: str
    mimes: tuple[str, ...]


READER_CHANGES: tuple[ReaderChange, ...] = (
    ReaderChange(2, "pictures in office documents and books, on PDF pages with text, in RTF documents and HTML pages "
                    "(read by OCR), pictures' alternative text, and Excel and PowerPoint 97-2003 files",
                 (*_OFFICE, "application/pdf", "text/rtf", "application/rtf", "text/html", "application/xhtml+xml",
                  "application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint")),
    # a notebook was typed by libmagic before: JSON when its head parsed (up to 64 KB), text when larger; only
    # the JSON ones are counted, as text files cannot be told from notebooks by their type (nor LaTeX sources,
    # typed text before: counted only where the system database had said text/x-tex)
    ReaderChange(3, "Jupyter notebooks (cells, outputs, pictures), JSON's escaped text, SVG drawings, XML documents "
                    "and LaTeX sources by the text they show (their markup paired unrelated files of one tool, "
                    "schema or template; escaped words matched nothing), and LibreOffice Draw and Visio drawings "
                    "and ODF templates (unsupported before)",
                 ("application/json", "application/x-ndjson", "image/svg+xml", "text/xml", "application/xml",
                  "text/x-tex", "application/vnd.ms-visio.drawing.main+xml", *_ODF_NEW)),
    # XPS documents were typed application/octet-stream before: not counted (nor is any such file)
    ReaderChange(4, "the labels of charts and drawings inline in web pages as words apart (they ran together), "
                    "and XPS and OpenXPS documents (unsupported before)",
                 ("text/html", "application/xhtml+xml")),
    ReaderChange(5, "the document properties of office documents and PDFs (title, subject, comments, keywords, "
                    "custom values: text a reader sees under File > Properties and on no page)",
                 (*_OFFICE[1:], *_ODF_NEW, "application/pdf")),
    # RAR archives were `unsupported` (no document): a rescan reads them again (`worth_reading_again`)
    ReaderChange(6, "the members of RAR archives (unsupported before)",
                 ("application/x-rar", "application/vnd.rar", "application/x-rar-compressed")),
    # an image without OCR was `unsupported`, one OCR found no words in `empty` (no document): read again
    ReaderChange(7, "the words of pictures' metadata (EXIF, XMP and IPTC captions, PNG text, JPEG and GIF comments)",
                 ("image/png", "image/jpeg", "image/tiff", "image/gif", "image/webp")),
    ReaderChange(8, "phones' HEIC and HEIF photographs and AVIF pictures, by OCR and their metadata (unsupported "
                    "before)",
                 ("image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence", "image/avif")),
    ReaderChange(9, "the XMP metadata of PDFs (title, description, keywords: PDF 2.0's only document properties)",
                 ("application/pdf",)),
    # winmail.dat was `unsupported` (no document) and a short Latin-1 text "binary content": read again
    ReaderChange(10, "winmail.dat (TNEF: the body and attachments of Outlook's mail to other programs; unsupported "
                     "before), Outlook items whose body is only rich text, and short texts in legacy Western code "
                     "pages (misread or refused before)",
                 ("application/vnd.ms-tnef", "application/ms-tnef", "application/vnd.ms-outlook", "text/plain")),
    ReaderChange(11, "Zstandard-compressed files and .tar.zst archives (unsupported before)",
                 ("application/zstd", "application/x-zstd")),
    ReaderChange(12, "ISO 9660 disc images, Cabinet files, cpio and ar archives and Debian packages (unsupported "
                     "before)",
                 ("application/x-iso9660-image", "application/x-cd-image", "application/vnd.ms-cab-compressed",
                  "application/x-cpio", "application/x-archive", "application/vnd.debian.binary-package")),
    # an .emlx was typed text (its length line hid its headers): those read as text are counted
    ReaderChange(13, "Apple Mail's .emlx message files as the mail they hold, attachments included (read as text "
                     "before: headers and base64 indexed as words)", ("text/plain",)),
    # a WARC was typed text too
    ReaderChange(14, "web archives (WARC) as the pages they hold, their HTTP encodings undone (read as text "
                     "before)", ("text/plain",)),
    # a container cut at 10,000 members, and a file over max_bytes, was `too_large` (no document): such files are
    # read again by newer readers (scan/run.py `worth_reading_again`); texts of lines over max_bytes are not listed
    # below, as a text file read before has its text (every one would be counted)
    ReaderChange(15, "mail stores and archives of more than 10,000 members (those past 10,000 were left unread as "
                     "an archive bomb before), and mailboxes, ZIP, TAR, 7z and disc images over 512 MiB and the first "
                     "lines of texts over it (none of them read before)",
                 ("application/mbox", "application/zip", "application/x-zip-compressed", "application/x-tar",
                  "application/gzip", "application/x-gzip", "application/x-bzip2", "application/x-xz",
                  "application/zstd", "application/x-zstd", "application/x-7z-compressed", "application/warc",
                  "application/x-rar", "application/vnd.rar", "application/x-iso9660-image", "application/x-cpio",
                  "application/x-archive", "application/vnd.debian.binary-package")),
    ReaderChange(16, "texts in the legacy code pages of Central and Eastern Europe, Greece, Turkey and the Baltic, "
                     "and short Chinese and KOI8 lines (charset-normalizer's pick read Polish cp1250 as Baltic cp1257, "
                     "Hungarian and Czech as cp1252, Russian capitals and Greek as Mac Cyrillic, GB 2312 as Korean: "
                     "their words matched nothing)",
                 ("text/plain", "text/csv", "text/tab-separated-values")),
    # a PST was typed as an Outlook item (application/vnd.ms-outlook) and left `corrupt`, an attached item and
    # a database `unsupported`: all read again for their status (`worth_reading_again`), so none is counted
    ReaderChange(17, "Outlook data files (.pst and .ost: every message, its attachments, and the items no folder "
                     "reaches; each store was one damaged Outlook item before), Outlook items attached to "
                     "Outlook items (forwarded mails, not opened before), and SQLite databases (chat and app "
                     "stores, their deleted rows still in free pages, and their write-ahead logs: unsupported "
                     "before), the prose in files no reader reads, carved from their bytes, and texts in a legacy "
                     "code page for which no encoding was found (binary content before), and Apple Pages, "
                     "Numbers and Keynote documents' archives, and Android backups", ()),
)
READERS_VERSION = max((change.version for change in READER_CHANGES), default=1)


def changes_missed(read_by: Iterable[tuple[str, int, int]]) -> list[tuple[ReaderChange, int]]:
    """Of (MIME type, readers' version, file count) rows, each later change with the number of files it
    concerns that were read before it, in version order (changes that concern none left out)."""
    rows = list(read_by)
    missed = [(change, sum(count for mime, version, count in rows if version < change.version and mime in change.mimes))
              for change in READER_CHANGES]
    return [(change, count) for change, count in missed if count]
