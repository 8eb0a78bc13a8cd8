"""Names and text from evidence, made safe to show (scanner/core/display.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scanner.core.display import printable, readable, visible

_ACTIVE = {*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0), 0x202E, 0x2067, 0xD800}


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_nothing_a_terminal_acts_on_survives(text: str) -> None:
    for shown in (printable(text), readable(text), visible(text)):
        assert not {ord(ch) for ch in shown} & _ACTIVE
    assert len(visible(text)) == len(text)  # one for one: offsets into the text still hold


def test_each_form_on_one_example() -> None:
    text = "a\x1b[2Jb\tc\nd\u00a0e\u202ef"
    assert printable(text) == "a\\x1b[2Jb\\tc\\nd\\xa0e\\u202ef"  # names: every unprintable character
    assert readable(text) == "a\\x1b[2Jb\tc\nd\u00a0e\\u202ef"  # text: layout and spaces stay
    assert visible(text) == "a\u241b[2Jb\tc\nd\u00a0e\ufffdf"
    assert readable("plain text") == "plain text" and visible("") == ""
