"""Names and text from evidence, made safe to show.

File names and document text are hostile input: escape sequences in them
could clear the screen, conceal words or set the window title, and
bidirectional overrides could reorder what a reader sees. Everything the
CLI and the TUI print from the evidence goes through one of these, and
an estimate is printed with the error it carries (`with_error`).
"""

from __future__ import annotations


def _escaped(ch: str) -> str:
    return ch.encode("unicode_escape").decode("ascii")


def printable(text: str) -> str:
    """A name made safe to show: every character that is not printable (ESC, BEL, bidi overrides,
    even a no-break space) written as its escape, so a file name can neither drive the terminal
    nor pass for another name."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in text)


def _hidden_characters() -> dict[int, int]:
    """What a terminal may act on, each with a visible stand-in of the same length: C0 controls but
    tab, newline and carriage return (their control pictures: ESC shows as U+241B), DEL, C1 controls,
    the bidirectional overrides and isolates that reorder what is shown, and lone surrogates."""
    table = {code: 0x2400 + code for code in range(0x20) if code not in (0x09, 0x0A, 0x0D)}
    table[0x7F] = 0x2421
    hidden = [*range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A),
              *range(0xD800, 0xE000)]
    table.update((code, 0xFFFD) for code in hidden)
    return table


_HIDDEN = _hidden_characters()


def visible(text: str) -> str:
    """A document's text for a screen that keeps offsets: each character a terminal may act on replaced
    by one visible stand-in (see _hidden_characters), so passages still line up with the text."""
    return text.translate(_HIDDEN)


def readable(text: str) -> str:
    """A document's text for plain output: the same characters as `visible` hides, written as escapes
    (\\x1b), so a passage can neither drive the terminal nor reorder what it says; spaces of every
    kind stay as they are."""
    if text.isprintable():
        return text
    return "".join(_escaped(ch) if ord(ch) in _HIDDEN else ch for ch in text)


def one_line(reason: str, limit: int = 300) -> str:
    """A reason on one line (white space runs, newlines included, become one space), cut at `limit`: every
    status reason is one line, whatever the library that raised it printed."""
    line = " ".join(reason.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def with_error(value: float, error: float, digits: int = 2) -> str:
    """An estimate as printed beside its 95 % error ("0.72±0.05"); a value measured exactly (error 0), alone."""
    return f"{value:.{digits}f}±{error:.{digits}f}" if error > 0 else f"{value:.{digits}f}"


def with_errors(values: tuple[float, ...], errors: tuple[float, ...], digits: int = 2) -> tuple[str, ...]:
    """`with_error` of each value and its error: a pair's resemblance and containments in one row."""
    return tuple(with_error(value, error, digits) for value, error in zip(values, errors))
