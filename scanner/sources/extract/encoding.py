"""Bytes -> str for text of unknown encoding, refusing binary junk.

Order: BOM, NUL-pattern test for BOM-less UTF-16 and UTF-32, the 7-bit escape
encodings (ISO-2022-JP and -KR, HZ), strict UTF-8, UTF-8 with a few stray bytes,
the document's declared charset, then charset-normalizer. Anything
that still decodes to mostly control characters is reported as binary rather
than returned as garbage text.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from scanner.core.errors import ExtractionError

if TYPE_CHECKING:
    from charset_normalizer import CharsetMatch

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_SAMPLE = 64 * 1024
_ALLOWED_CONTROLS = frozenset("\t\n\r\f\v\x1b")
_MAX_CONTROL_SHARE = 0.02
# When charset-normalizer scores several code pages equally (short Western
# text: cp1250 and cp1252 tie), take the one most files in the wild use.
_TIE_BREAK = ("cp1252", "latin_1")
_CHAOS_MARGIN = 0.05
_SEPARATOR = re.compile("[\\s\u3000-\u303f\uff01-\uff0f\uff1a-\uff1f\uff61-\uff65]")
_LEAST_SEPARATORS = 0.02  # a Chinese text's 。，、 and line ends: 5-10 % of it; Latin or Cyrillic spaces: ~15 %
_STRAY_EVIDENCE = 4  # bytes of valid multi-byte UTF-8 needed for each invalid one
_STRAY_SHARE = 100  # and at most one byte in this many invalid
_ESCAPED = re.compile("[\udc80-\udcff]")
_CP1252_OF_ESCAPED = {0xDC00 + byte: bytes([byte]).decode("cp1252", errors="replace") for byte in range(0x80, 0x100)}


def bom_encoding(data: bytes) -> tuple[str, int] | None:
    """(encoding, BOM length) if `data` starts with a Unicode byte-order mark."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    return None


def wide_encodings(sample: bytes) -> tuple[str, ...]:
    """The BOM-less UTF-32 or UTF-16 that `sample`, holding NULs, may be in, likelier first: text in any
    script (Latin in UTF-16 has a NUL in every other byte; Cyrillic, Greek or Chinese only beside its spaces,
    digits and line ends, and Chinese a few more on the other side, in U+xx00 characters such as 一, so a
    test of "mostly NULs on one side" took it for binary). Only a strict decoding into few control
    characters says which, if any, it is."""
    whole = len(sample) // 4 * 4
    if whole >= 8:  # code points up to 0x10FFFF: in UTF-32 one byte of four is always 0, the next at most 0x10
        if sample[3:whole:4].count(0) == whole // 4 and max(sample[2:whole:4]) <= 0x10:
            return ("utf-32-le",)
        if sample[0:whole:4].count(0) == whole // 4 and max(sample[1:whole:4]) <= 0x10:
            return ("utf-32-be",)
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    return ("utf-16-le", "utf-16-be") if odd >= even else ("utf-16-be", "utf-16-le")


def _wide_text(data: bytes, sample: bytes) -> tuple[str, str] | None:
    """(text, encoding) of `data` in the first of its `wide_encodings` that decodes strictly into few control
    characters; None: binary."""
    for encoding in wide_encodings(sample):
        unit = 4 if encoding.startswith("utf-32") else 2
        try:
            text = data[: len(data) - len(data) % unit].decode(encoding)
        except UnicodeDecodeError:
            continue
        if control_share(text) <= _MAX_CONTROL_SHARE and _separated(text):
            return text, encoding
    return None


def _separated(text: str) -> bool:
    """Whether `text` has the spaces, line ends or CJK punctuation of writing: binary bytes taken two at a
    time are letters of every script (a repeated hash read as UTF-16 is Hangul and ideographs without a
    control among them), and almost never one of these ~170 of the 65,536 code units."""
    sample = text[:_SAMPLE]
    return len(_SEPARATOR.findall(sample)) >= _LEAST_SEPARATORS * len(sample)


def _stray_bytes_as_cp1252(data: bytes) -> tuple[str, int] | None:
    """`data` as UTF-8 whose few invalid bytes are read as cp1252 (a Latin-1 word pasted into a UTF-8 text, a
    file cut mid-character), with their count; None when they are not few against the characters UTF-8
    reads in several bytes (a Latin-1 text is invalid UTF-8 at every accented letter, and has no such
    character). Such a file was refused whole as "no text encoding fits"."""
    text = data.decode("utf-8", errors="surrogateescape")  # each invalid byte: one lone surrogate
    strays = len(_ESCAPED.findall(text))
    several = len(data) - len(text)  # bytes beyond the first of valid multi-byte characters
    if not strays or several < _STRAY_EVIDENCE * strays or strays * _STRAY_SHARE > len(data):
        return None
    return text.translate(_CP1252_OF_ESCAPED), strays


# Designations of a double-byte set (JIS X 0208, 0212, 0213, GB 2312, KS C 5601) that only the ISO-2022
# encodings write: a lone ESC ( B, which some terminals' colour resets hold, is not among them.
_ISO2022_JP_MARKS = (b"\x1b$@", b"\x1b$B", b"\x1b$A", b"\x1b$(C", b"\x1b$(D", b"\x1b$(O", b"\x1b$(P", b"\x1b$(Q")
_ISO2022_JP_CODECS = ("iso2022_jp", "iso2022_jp_2", "iso2022_jp_2004", "iso2022_jp_3", "iso2022_jp_ext")
_HZ_SECTION = re.compile(rb"~\{([^~]*)~\}")
_HZ_LEAST = 4


def seven_bit_text(data: bytes) -> tuple[str, str] | None:
    """(text, encoding) of `data` (ASCII bytes) in the 7-bit escape encoding it is written in, when it decodes
    as one strictly: ISO-2022-JP (Japanese mail and text), ISO-2022-KR, or HZ (GB 2312 between ~{ and ~}).
    Such bytes are valid UTF-8 too, and read as UTF-8 they are escape codes and letter pairs ("$3$s$K$A$O"),
    indexed as text that matches nothing: the copy of a document in one of them went unseen."""
    if not data.isascii():
        return None
    # one-byte searches first (memchr: 0.3 ms for 11 MB, where each search for a longer mark took 7-11 ms)
    escaped = data.find(b"\x1b") >= 0
    if escaped and b"\x1b$)C" in data:  # ISO-2022-KR's header: its Korean then sits between SO and SI
        candidates: tuple[str, ...] = ("iso2022_kr",)
    elif escaped and any(mark in data for mark in _ISO2022_JP_MARKS):
        candidates = _ISO2022_JP_CODECS  # the narrowest that decodes names the text best
    elif data.find(b"~") >= 0 and b"~{" in data and _hz_like(data):
        candidates = ("hz",)
    else:
        return None
    for codec in candidates:
        try:
            return data.decode(codec), codec
        except UnicodeDecodeError:
            continue
    return None


def _hz_like(data: bytes) -> bool:
    """Whether the ~{ sections of `data` hold Chinese as HZ writes it: GB 2312 pairs of printable bytes, no
    space or line break inside, at least _HZ_LEAST characters in all, most of them from the rows of the
    common hanzi and punctuation. An ASCII text with a stray "~{ab~}" or "~{ABCDEFGH~}" in it (code,
    LaTeX) is not HZ."""
    sections = _HZ_SECTION.findall(data)
    if not sections or data.count(b"~{") != len(sections) or any(
            len(section) % 2 or any(not 0x21 <= byte <= 0x7E for byte in section) for section in sections):
        return False
    joined = b"".join(sections)
    leads = joined[0::2]
    common = sum(1 for byte in leads if byte <= 0x29 or 0x30 <= byte <= 0x57)  # GB 2312 rows 1-9 and 16-55
    # a word of letters and digits (a name, a constant) between the marks is not HZ: Chinese writes most
    # bytes of the printable range, punctuation among them
    return len(leads) >= _HZ_LEAST and common >= 0.75 * len(leads) and not joined.isalnum()


def _is_bad(ch: str) -> bool:
    return ch not in _ALLOWED_CONTROLS and unicodedata.category(ch) in ("Cc", "Cs", "Cn", "Co")


_ASCII_BAD = np.array([_is_bad(chr(code)) for code in range(128)], dtype=bool)


def control_share(text: str) -> float:
    """Share of characters that are controls, unassigned or lone surrogates.

    Counted with numpy over code points; categories are looked up once per
    distinct non-ASCII character, not once per character.
    """
    if not text:
        return 0.0
    sample = text[:_SAMPLE]
    if sample.isascii():
        return float(_ASCII_BAD[np.frombuffer(sample.encode("ascii"), dtype=np.uint8)].sum()) / len(sample)
    codes = np.frombuffer(sample.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    low = codes < 128
    bad = int(_ASCII_BAD[codes[low]].sum())
    distinct, counts = np.unique(codes[~low], return_counts=True)
    bad += sum(n for code, n in zip(distinct.tolist(), counts.tolist()) if _is_bad(chr(code)))
    return bad / len(sample)


# the characters beyond ASCII that French, German, Spanish, Italian, Portuguese, Dutch, Danish, Norwegian,
# Swedish and Finnish text in cp1252 holds (not ð, þ, ý: in cp1252 they are the bytes of Turkish ğ, ş, ı and of
# Cyrillic р, ю, э; nor signs such as ³ or ¹, Polish ł and ą in cp1250)
_WESTERN = frozenset("àáâãäåæçèéêëìíîïñòóôõöøùúûüÿßœšžÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜŸŒŠŽ«»¿¡€–—‘’“”…°§·\xa0")
# code pages charset-normalizer may rank first for a few accented words, which a file is seldom written in
_UNLIKELY = ("hp_roman8", "mac_")


def _western(data: bytes) -> str | None:
    """`data` in cp1252 when it reads as Western European words there: strictly decoded, every character
    beyond ASCII one of `_WESTERN`, letters for half the characters and a word every 20. Binary bytes
    without NULs seldom pass: one in 51 is a byte cp1252 leaves undefined, one in 8 a control character."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    if any(not ch.isascii() and ch not in _WESTERN for ch in text) or not _reads_as_text(text):
        return None
    return text


# words of those languages that English writes too: the English around a few names is no evidence of one
_ENGLISH_TOO = frozenset("to do in on is at as no see be it an or of by he we me so if up us my".split())
# the languages the legacy one-byte code pages are written for: the letters of each beyond ASCII (lower case) and
# some of its commonest words. A text read in the right code page holds letters of one language, where a wrong
# one turns them into signs (Polish "ł" as cp1257's "³"), into letters of another language ("ą" as iso8859-10's
# "ģ" beside "ł"; Turkish "ı" as cp1252's Icelandic "ý") or of the wrong case (Russian capitals read as
# mac_cyrillic: "Портовое" -> "ѕортовое"); its words say which language it is where letters alone do not
_LANGUAGES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(letters), frozenset(words.split()) - _ENGLISH_TOO) for letters, words in (
        ("àâæçéèêëîïôœùûüÿ", "le la les de des et un une est que qui dans pour pas au du en sur"),  # French
        ("äöüß", "der die das und ist nicht ein eine den im zu mit von auf für des"),  # German
        ("áéíñóúü", "el la los las de que y en un una es por con para del"),  # Spanish
        ("ãõáâêóôçàéíú", "o a os as de que e em um uma é do da para com não"),  # Portuguese
        ("àèéìíîòóù", "il la di che e un una per non sono del della con"),  # Italian
        ("ëïéèáóú", "de het een en van is dat niet op te"),  # Dutch
        ("åæøéäö", "og i det er en til at av på som för och att är"),  # Danish, Norwegian, Swedish
        ("äöåš", "ja on ei se että hän oli"),  # Finnish
        ("áðéíóúýþæö", "og að í er á það sem við"),  # Icelandic
        ("àçèéíïòóúü", "el la els les de que i en un una"),  # Catalan
        ("ąćęłńóśźż", "i w na nie się z do to że jest o jak"),  # Polish
        ("áčďéěíňóřšťúůýž", "a v se na je že to s z do jako"),  # Czech
        ("áäčďéíĺľňóôŕšťúýž", "a v sa na je že to s z do"),  # Slovak
        ("áéíóöőúüű", "a az és hogy nem egy is de"),  # Hungarian
        ("čšž", "in je na se da za v"),  # Slovenian
        ("čćđšž", "i je na se da za u"),  # Croatian, Bosnian
        ("ăâîșțşţ", "a și şi în de la nu un o pe cu este să se din care"),  # Romanian
        ("çğıöşüâîû", "ve bir bu da de için ile çok olarak gibi"),  # Turkish
        ("āčēģīķļņšūž", "un ir ar par no uz"),  # Latvian
        ("ąčęėįšųūž", "ir yra kad su į iš"),  # Lithuanian
        ("äöõüšž", "ja on et ei see"),  # Estonian
        ("ĉĝĥĵŝŭ", "la de kaj en al estas ke ne"),  # Esperanto
        ("абвгдежзийклмнопрстуфхцчшщъыьэюяё", "и в не на что с по как это он она к у"),  # Russian
        ("абвгдежзийклмнопрстуфхцчшщьюяєіїґ", "і в не на що з та до як це"),  # Ukrainian
        ("абвгдежзйклмнопрстуўфхцчшыьэюяёі", "і ў не на што з"),  # Belarusian
        ("абвгдежзийклмнопрстуфхцчшщъьюя", "и в не на да се от за че"),  # Bulgarian
        ("абвгдђежзијклљмнњопрстћуфхцчџш", "и у не на да се је"),  # Serbian
        ("абвгдѓежзѕијклљмнњопрстќуфхцчџш", "и во не на да се е"),  # Macedonian
        ("αβγδεζηθικλμνξοπρστυφχψωάέήίόύώϊϋΐΰς", "και το να η ο της την του με για σε που"),  # Greek
    ))
_LETTERS = frozenset().union(*(letters for letters, _ in _LANGUAGES))
# the signs beyond ASCII that text in any of them holds (not ±, ¹, ², ³, ¤, ¦, ¬...: what a wrong code page makes
# of their letters)
_SIGNS = frozenset("«»„“”‘’‚–—…°§·№€\xa0¡¿©®™µ×ªº")
# a sign between two letters is what a wrong code page makes of a letter ("Hern·ndez", "veµmi"): but an
# apostrophe, and Catalan's l·l
_INSIDE_WORD = re.compile(r"(?<=[^\W\d_])[^\w\s’'](?=[^\W\d_])")
# the code pages tried, in the order that settles a tie (the one most files in the wild use first)
_ONE_BYTE_PAGES = ("cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1257", "iso8859_2", "koi8_r", "koi8_u",
                   "iso8859_5", "iso8859_7", "iso8859_15", "mac_roman", "iso8859_3")
_WORD_OF_LETTERS = re.compile(r"[^\W\d_]+")
_BEYOND_ASCII = re.compile(r"[^\x00-\x7f]")
_JUDGED = 4 * 1024  # bytes of a text's lines beyond ASCII its code page is judged on
# plausibilities this close are a tie (the first page wins): a few common words of another language met by chance
# ("is", "to", "in" in English) are no evidence against a letter or a sign
_NEARLY = 0.05
# a reading this plausible is a language's text, where charset-normalizer found no encoding at all: random
# bytes that read as text in some page score 0.54 at most (6,000 seeded draws of 40-64 bytes), vim's Russian
# tutor 1.07
_WORDS_OF_A_LANGUAGE = 0.8


def _one_byte(encoding: str) -> bool:
    """Whether `encoding` gives one character a byte (a legacy code page, not a CJK multi-byte encoding)."""
    try:
        return len(bytes(range(0x80, 0x100)).decode(encoding, errors="replace")) == 0x80
    except LookupError:
        return False


def _reads_as_text(text: str) -> bool:
    """Letters for half of it, a word every 20 characters, few control characters: text, not binary bytes."""
    return (bool(text) and sum(map(str.isalpha, text)) >= len(text) // 2 and len(text.split()) > len(text) // 20
            and control_share(text) <= _MAX_CONTROL_SHARE)


def _plausibility(text: str) -> float:
    """How much `text` reads as words of one language of `_LANGUAGES`: the share of its letters beyond ASCII
    that language's letters are, plus the share of its words that are its common words, times the share of its
    words written in one script and a case a word takes (lower, Capitalised, UPPER), less the share of its
    characters beyond ASCII that are neither letters of those languages nor `_SIGNS`."""
    lower = text.lower()
    beyond = Counter(_BEYOND_ASCII.findall(lower))  # each character beyond ASCII, counted
    if not beyond:
        return 1.0
    words = _WORD_OF_LETTERS.findall(text)
    letters = {ch: n for ch, n in beyond.items() if ch.isalpha() and ch not in _SIGNS}  # µ, ª, º: letters to Unicode
    lowered = Counter(_WORD_OF_LETTERS.findall(lower))
    for word in [word for word in lowered if len(word) < 2]:  # "a", "i", "o", "v": words of too many languages
        del lowered[word]
    total_letters = sum(letters.values())

    def fits(language: tuple[frozenset[str], frozenset[str]]) -> float:
        """Its letters' share of the language's, and (where it has such letters to tell) its words' share of
        the language's common words: a reading that makes signs of them all gets no language's words."""
        alphabet, common = language
        if not letters:
            return 1.0
        return (sum(n for ch, n in letters.items() if ch in alphabet) / total_letters
                + sum(lowered[word] for word in common) / max(len(words), 1))

    scripts: dict[str, str] = {}  # each letter beyond ASCII's script, looked up once

    def one_script(word: str) -> bool:
        found = {scripts.setdefault(ch, unicodedata.name(ch, "?").split(" ", 1)[0]) if not ch.isascii() else "LATIN"
                 for ch in word if ch not in _SIGNS}
        return len(found) <= 1

    telling = Counter(words)
    for word in [word for word in telling if word.isascii()]:  # the words a code page decides, each once
        del telling[word]
    cased = sum(n for word, n in telling.items() if (word.islower() or word.isupper() or word.istitle())
                and one_script(word)) / telling.total() if telling else 1.0
    inside = sum(ch != "·" or match.string[match.start() - 1:match.end() + 1].lower() != "l·l"
                 for match in _INSIDE_WORD.finditer(text) if not (ch := match.group()).isascii())
    strange = sum(n for ch, n in beyond.items()
                  if not (ch.isalpha() and ch in _LETTERS) and ch not in _SIGNS) + inside
    return max(fits(language) for language in _LANGUAGES) * cased - strange / sum(beyond.values())


_BEYOND_ASCII_BYTE = re.compile(rb"[\x80-\xff]")


def _lines_beyond_ascii(data: bytes) -> bytes:
    """The lines of `data` that hold bytes beyond ASCII, the first `_JUDGED` bytes of them: all that tells one
    code page from another (a long English changelog's few names), and the least to read in each."""
    lines: list[bytes] = []
    size = at = 0
    while size < _JUDGED and (found := _BEYOND_ASCII_BYTE.search(data, at)) is not None:
        start = data.rfind(b"\n", 0, found.start()) + 1
        end = data.find(b"\n", found.start())
        end = len(data) if end < 0 else end
        lines.append(data[start:end])
        size += end - start + 1
        at = end + 1
    return b"\n".join(lines)[:_JUDGED] or data[:_JUDGED]


def _likeliest_one_byte(data: bytes, proposed: str | None = None) -> tuple[str, str, float] | None:
    """(text, code page, plausibility) of `data` in the legacy one-byte code page it reads best in
    (`_plausibility` of its lines beyond ASCII; a tie, within `_NEARLY`, goes to the first of `_ONE_BYTE_PAGES`,
    then `proposed`, charset-normalizer's pick, when it is such a page); None when it reads as text in none.
    Those lines are read in each page; the whole, in the best that decodes all of it."""
    pages = (*_ONE_BYTE_PAGES, proposed) if proposed and _one_byte(proposed) else _ONE_BYTE_PAGES
    head = _lines_beyond_ascii(data)
    ranked: list[tuple[float, int, str]] = []
    scored: dict[str, float] = {}  # pages that read the lines alike (cp1252, iso8859-15) are weighed once
    for order, page in enumerate(dict.fromkeys(pages)):
        try:
            lines = head.decode(page)
        except (UnicodeDecodeError, LookupError):
            continue
        if lines not in scored:
            scored[lines] = _plausibility(lines)
        ranked.append((scored[lines], order, page))
    if not ranked:
        return None
    top = max(score for score, _, _ in ranked)
    near = sorted((item for item in ranked if item[0] >= top - _NEARLY), key=lambda item: item[1])  # earlier first
    rest = sorted((item for item in ranked if item[0] < top - _NEARLY), key=lambda item: -item[0])
    for score, _, page in near + rest:
        try:
            text = data.decode(page)
        except UnicodeDecodeError:
            continue
        return (text, page, score) if _reads_as_text(text[:_JUDGED]) else None
    return None


_ODD = 0.1  # an East Asian reading this odd is another's text


def _east_asian_oddity(text: str) -> float:
    """How far `text` is from one East Asian language as it is written: the share of its East Asian characters
    that are half-width katakana (a Japanese form of old terminals, and what Cyrillic KOI8 bytes read as
    Shift JIS become), plus, where Hangul and Chinese characters mix, the share of the fewer (modern Korean writes
    Hangul alone, Chinese no Hangul: GB 2312 read as Korean cp949 is "콱봤，各썹"). 0: none."""
    codes = np.frombuffer(text[:_JUDGED].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    hangul = int(((codes >= 0xAC00) & (codes <= 0xD7A3)).sum())
    han = int(((codes >= 0x4E00) & (codes <= 0x9FFF)).sum())
    kana = int(((codes >= 0x3040) & (codes <= 0x30FF)).sum())
    half_width = int(((codes >= 0xFF61) & (codes <= 0xFF9F)).sum())
    east_asian = hangul + han + kana + half_width
    if not east_asian:
        return 0.0
    return (half_width + min(hangul, han)) / east_asian


def _likeliest_east_asian(data: bytes, best: "CharsetMatch", tied: "list[CharsetMatch]") -> tuple[str, str]:
    """charset-normalizer's multi-byte pick, unless it reads as no one East Asian language (`_east_asian_oddity`)
    where another of its near-equal picks does, or a legacy one-byte code page reads as words of a language."""
    oddity = _east_asian_oddity(str(best))
    if oddity < _ODD:
        return _checked(str(best), best.encoding)
    for other in tied:
        if not _one_byte(other.encoding) and _east_asian_oddity(str(other)) < _ODD:
            return _checked(str(other), f"{other.encoding} (read as one language, not as {best.encoding})")
    found = _likeliest_one_byte(data)
    if found is not None and found[2] >= 1.0 - _NEARLY:
        return _checked(found[0], f"{found[1]} (read as words of its languages, not as {best.encoding})")
    return _checked(str(best), best.encoding)


def _latin(text: str) -> bool:
    """Whether every letter of `text` is of the Latin script."""
    return all(ch.isascii() or not ch.isalpha() or unicodedata.name(ch, "").startswith("LATIN") for ch in text)


def _checked(text: str, encoding: str) -> tuple[str, str]:
    if control_share(text) > _MAX_CONTROL_SHARE:
        raise ExtractionError(
            f"binary content: decodes as {encoding} to mostly control characters",
            status="unsupported",
        )
    return text, encoding


def decode_text(data: bytes, hint: str | None = None) -> tuple[str, str]:
    """Decode `data`, returning (text, encoding name).

    Args:
        data: raw bytes of a text-like document.
        hint: an encoding declared by the document itself (HTML meta charset);
            used when the bytes are not valid UTF-8 and before guessing.

    Raises:
        ExtractionError: status "empty" for no bytes or NUL-only content,
            "unsupported" for binary content.
    """
    if not data:
        raise ExtractionError("empty file", status="empty")
    bom = bom_encoding(data)
    if bom:
        encoding, skip = bom
        return _checked(data[skip:].decode(encoding, errors="replace"), encoding + " (BOM)")
    if not data.strip(b"\x00"):
        raise ExtractionError("only NUL bytes", status="empty")
    sample = data[:_SAMPLE]
    if sample.count(0) > len(sample) // 100:
        wide = _wide_text(data, sample)
        if wide is None:
            raise ExtractionError("binary content: contains NUL bytes", status="unsupported")
        return wide
    seven_bit = seven_bit_text(data)
    if seven_bit is not None:
        return _checked(*seven_bit)
    try:
        return _checked(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass  # valid UTF-8 beats any declaration: pages often lie about latin-1; so does UTF-8 with a few strays
    strayed = _stray_bytes_as_cp1252(data)
    if strayed is not None:
        text, strays = strayed
        return _checked(text, f"utf-8 ({strays} stray byte{'s' * (strays > 1)} read as cp1252)")
    if hint:
        try:
            return _checked(data.decode(hint), hint)
        except (LookupError, UnicodeDecodeError):
            pass
    from charset_normalizer import from_bytes

    results = list(from_bytes(data))
    if not results:  # it scores nothing for a short Latin-1 line ("TEST \xe4\xf6\xfc +-*/~", a real attachment)
        western = _western(data)
        if western is not None:
            return western, "cp1252 (no encoding detected)"
        # nor for some whole texts: vim's Russian tutor in cp1251 (36 KB), as its last line of tildes joins it
        found = _likeliest_one_byte(data)
        if found is not None and found[2] >= _WORDS_OF_A_LANGUAGE:
            text, page, _ = found
            return _checked(text, f"{page} (no encoding detected; read as words of its languages)")
        raise ExtractionError("binary content: no text encoding fits", status="unsupported")
    best = results[0]
    # Near-ties too: charset-normalizer's chaos is noisy on short text (French/German Latin-1
    # scored as Baltic cp1257 by 0.04), and a wrong pick turns every accented letter into mojibake.
    tied = [m for m in results if m.chaos <= best.chaos + _CHAOS_MARGIN and m.coherence >= best.coherence]
    if _one_byte(best.encoding):  # its pick among the legacy code pages, against how each reads as words
        found = _likeliest_one_byte(data, best.encoding)
        if found is not None:
            text, page, score = found
            if page == best.encoding or any(page in m.could_be_from_charset for m in tied):
                return _checked(text, page)
            picked = _plausibility(_lines_beyond_ascii(data).decode(best.encoding, errors="replace"))
            if score > picked + _NEARLY or (score >= picked - _NEARLY
                                                               and best.encoding.startswith(_UNLIKELY)):
                return _checked(text, f"{page} (read as words of its languages, not as {best.encoding})")
    for common in _TIE_BREAK:
        if any(common in m.could_be_from_charset for m in tied):
            return _checked(data.decode(common, errors="replace"), common)
    # a few accented Western words can rank a far-off code page first ("Ça va très bien" as Big5: "ド va
    # tr鋊 bien"; Finnish "Hyvää päivää" as HP Roman-8), which turns them into words that match nothing
    if (not _latin(str(best)) or best.encoding.startswith(_UNLIKELY)) and (western := _western(data)) is not None:
        return western, f"cp1252 (read as Western European words, not as {best.encoding})"
    if not _one_byte(best.encoding):  # a multi-byte pick: the East Asian reading that reads as one language
        return _likeliest_east_asian(data, best, tied)
    return _checked(str(best), best.encoding)
