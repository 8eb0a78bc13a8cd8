"""XML documents read by their character data (`scanner_plugins.xmldoc`), not their tags.

The documents are written here as TEI encodes a text (a header, then paragraphs whose words carry inline
elements: `<hi rend="italic">`, `<persName ref="#p12">`), and as a data export whose text is in attributes.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from clirun import scanned_pairs
from corpus import prose

from scanner.core.model import TextStatus
from scanner.sources.extract import extract_bytes
from scanner.sources.extract.routing import detect_mime
from scanner.sources.plugins import make_plugin_manager
from scanner_plugins import xmldoc


@pytest.fixture(scope="module")
def pm():
    return make_plugin_manager(load_entry_points=False)


def tei(text: str, seed: int) -> bytes:
    """`text` encoded in TEI: one word in ten italic, one in twenty a person's name, a paragraph a sentence."""
    rng = random.Random(seed)
    words = []
    for word in text.split():
        draw = rng.random()
        if draw < 0.1:
            word = f'<hi rend="italic">{word}</hi>'
        elif draw < 0.15:
            word = f'<persName ref="#p{rng.randrange(99)}">{word}</persName>'
        words.append(word)
    paragraphs = "\n".join(f"      <p>{sentence}.</p>" for sentence in " ".join(words).split(". "))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0">\n'
            f'  <teiHeader><fileDesc><titleStmt><title>Document {seed}</title></titleStmt>\n'
            "    <publicationStmt><p>Unpublished</p></publicationStmt></fileDesc></teiHeader>\n"
            f'  <text><body><div type="chapter">\n{paragraphs}\n  </div></body></text>\n</TEI>\n').encode()


def test_inline_elements_join_their_words_and_blocks_make_lines(pm) -> None:
    data = b"""<?xml version="1.0"?>
<!DOCTYPE TEI SYSTEM "tei_all.dtd">
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><title>The Minutes</title></teiHeader>
<!-- transcribed from the second copy -->
<text><body>
  <head>Chapter <num>1</num></head>
  <p>The com<hi rend="italic">mit</hi>tee met <persName ref="#p12">Ada Lovelace</persName> at noon.</p>
  <figure facs="page-7.png"><figDesc>A drawing of the analytical engine's mill</figDesc></figure>
</body></text></TEI>"""
    assert detect_mime(data) == "text/xml"
    read = extract_bytes(data, "text/xml", pm)
    assert (read.status, read.extractor) == (TextStatus.OK, "xml")
    assert read.body == ("The Minutes\nChapter 1\nThe committee met Ada Lovelace at noon.\n"
                         "A drawing of the analytical engine's mill")
    assert read.region_texts == [("transcribed from the second copy", "a comment")]
    assert read.meta["attributes_left_out"].startswith("3 ")  # italic, #p12, page-7.png


def test_prose_in_attributes_is_a_region_and_an_export_of_attributes_its_body(pm) -> None:
    described = b'<map><place name="Grenoble" note="The station was moved after the flood of 1859"/><p>x y</p></map>'
    read = extract_bytes(described, "application/xml", pm)
    assert read.body == "x y"
    assert read.region_texts == [("The station was moved after the flood of 1859", "attribute values")]
    export = b'<rows><row name="Anna Weber" city="Grenoble"/><row name="Ivan Petrov" city="Lyon" id="7"/></rows>'
    read = extract_bytes(export, "application/xml", pm)
    assert read.body == "Anna Weber\nGrenoble\nIvan Petrov\nLyon"
    assert read.meta["read_from"].startswith("attribute values")


def test_bad_refused_or_huge_xml_is_read_as_text(pm, monkeypatch) -> None:
    broken = b"<doc><p>A paragraph cut short"
    read = extract_bytes(broken, "text/xml", pm)
    assert read.extractor == "text" and read.meta["fallback_from"].startswith("xml: corrupt")
    assert "A paragraph cut short" in read.text
    entities = b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa">]><d>&a;</d>'
    assert "entity declarations refused" in extract_bytes(entities, "text/xml", pm).meta["fallback_from"]
    monkeypatch.setattr(xmldoc, "MAX_TREE_BYTES", 100)
    large = b"<doc>" + b"<p>words of a large export</p>" * 10 + b"</doc>"
    read = extract_bytes(large, "text/xml", pm)
    assert read.extractor == "text" and "its tree is not built" in read.meta["fallback_from"]


def test_documents_of_one_schema_pair_only_by_their_text(tmp_path: Path) -> None:
    """Seven TEI documents read as text shared their markup's passages (every pair had passages); now only
    the TEI copy of a plain text is paired, with it, as a near-duplicate."""
    folder = tmp_path / "tei"
    folder.mkdir()
    source = prose(777, 600)
    (folder / "source.txt").write_text(source, encoding="utf-8")
    (folder / "copy.xml").write_bytes(tei(source, 1))
    for k in range(6):
        (folder / f"other{k}.xml").write_bytes(tei(prose(900 + k, 500), 10 + k))
    found, pairs = scanned_pairs(folder, tmp_path / "i.db", "--no-semantic")
    assert set(pairs) == {frozenset(("source.txt", "copy.xml"))}
    assert pairs[frozenset(("source.txt", "copy.xml"))]["share_a"] >= 0.95
    clusters = [sorted(Path(member["path"]).name for member in c["members"]) for c in found["clusters"]]
    assert clusters == [["copy.xml", "source.txt"]]
