"""The words a picture holds outside its pixels (readers' version 7): a PNG's text chunks, a JPEG's comment,
EXIF, XMP and IPTC captions, a TIFF's or GIF's description. A leak typed into a photograph's caption was read
nowhere: OCR reads pixels, and a picture without text in them was `empty`, or not even a member of the
document holding it when small. Every picture here is written by Pillow (or, for IPTC, by the bytes its
specification gives), the words planted by the test."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import pytest
from carriers import CARRIERS
from corpus import prose
from PIL import Image, PngImagePlugin

from scanner.core.model import TextStatus
from scanner.sources.extract import ExtractLimits, detect_mime, extract_bytes
from scanner.sources.extract.readers import READER_CHANGES
from scanner.sources.plugins import make_plugin_manager
from scanner_plugins._picture_metadata import PICTURE_METADATA_REGION, picture_metadata_text

NO_OCR = ExtractLimits(ocr=False)


def _one_line(text: str) -> str:
    """What a caption gives: its words, a space apart (a caption's line breaks are no paragraphs)."""
    return " ".join(text.split())


def _xmp(field: str, *values: str) -> bytes:
    items = "".join(f"<rdf:li>{value}</rdf:li>" for value in values)
    return ('<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
            '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description '
            'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/">'
            f"<dc:{field}><rdf:Bag>{items}</rdf:Bag></dc:{field}><dc:creator><rdf:Seq><rdf:li>A. Photographer"
            "</rdf:li></rdf:Seq></dc:creator><xmp:CreatorTool>Some Editor 5.1</xmp:CreatorTool>"
            '</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>').encode()


def _picture() -> Image.Image:
    return Image.new("RGB", (320, 120), "white")


def _save(image: Image.Image, form: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, form, **options)
    return out.getvalue()


def _with_iptc(jpeg: bytes, caption: str, keywords: list[str]) -> bytes:
    """The JPEG with an APP13 segment holding IPTC-IIM records (caption 2:120, keywords 2:25), as Photoshop
    writes them: "Photoshop 3.0", an 8BIM resource 0x0404 with an empty name."""
    records = b"".join(b"\x1c\x02" + bytes([number]) + struct.pack(">H", len(value)) + value
                       for number, value in [(120, caption.encode()), *((25, k.encode()) for k in keywords)])
    records += b"\0" * (len(records) % 2)
    resource = b"8BIM" + struct.pack(">H", 0x0404) + b"\0\0" + struct.pack(">I", len(records)) + records
    body = b"Photoshop 3.0\0" + resource
    return jpeg[:2] + b"\xff\xed" + struct.pack(">H", len(body) + 2) + body + jpeg[2:]


def test_every_format_gives_its_captions_and_nothing_tools_wrote() -> None:
    chunks = PngImagePlugin.PngInfo()
    chunks.add_text("Title", "harbour at dawn")
    chunks.add_text("Software", "GIMP 2.10.34")  # a tool: left out
    chunks.add_text("Author", "A. Photographer")  # a name: left out
    chunks.add_text("Comment", "the budget figures were moved", zip=True)  # zTXt
    chunks.add_itxt("Description", "la réunion du conseil a été reportée", lang="fr")
    chunks.add_text("Raw profile type exif", "\nexif\n      22\n45786966000049492a00080000000000\n")
    chunks.add_text("Page", "32x32+0+0")  # ImageMagick's geometry (a real PNG of /usr/lib holds one)
    chunks.add_text("mxfile", "%3Cmxfile%20host%3D%22app.diagrams.net%22%3E" * 8)  # a diagram editor's data
    chunks.add_itxt("XML:com.adobe.xmp", _xmp("subject", "minutes", "board meeting").decode())
    assert picture_metadata_text(_save(_picture(), "PNG", pnginfo=chunks)).splitlines() == [
        "harbour at dawn", "the budget figures were moved", "la réunion du conseil a été reportée", "minutes",
        "board meeting"]

    exif = Image.Exif()
    exif[0x010E] = "an image description typed into the phone"
    exif[0x0131] = "Camera Firmware 1.0"  # Software: left out
    exif[0x9C9C] = "a comment from the Windows file dialog".encode("utf-16-le") + b"\0\0"  # XPComment
    exif.get_ifd(0x8769)[0x9286] = b"UNICODE\0" + "a user comment in UTF-16".encode("utf-16-le")
    jpeg = _save(_picture(), "JPEG", exif=exif, comment=b"a JPEG comment segment",
                 xmp=_xmp("description", "an XMP caption"))
    assert picture_metadata_text(_with_iptc(jpeg, "an IPTC caption", ["harbour", "ferry"])).splitlines() == [
        "a JPEG comment segment", "an image description typed into the phone",
        "a comment from the Windows file dialog", "a user comment in UTF-16", "an XMP caption",
        "an IPTC caption", "harbour", "ferry"]

    assert picture_metadata_text(_save(_picture(), "TIFF", tiffinfo={270: "a TIFF description"})) == \
        "a TIFF description"
    assert picture_metadata_text(_save(_picture().convert("P"), "GIF", comment=b"a GIF comment")) == "a GIF comment"
    webp_exif = Image.Exif()
    webp_exif[0x010E] = "a WebP caption"
    assert picture_metadata_text(_save(_picture(), "WEBP", exif=webp_exif)) == "a WebP caption"

    from pillow_heif import register_heif_opener

    register_heif_opener()  # to write one: the reader opens it on its own
    heic_exif = Image.Exif()
    heic_exif[0x010E] = "a caption on a phone's photograph"
    assert picture_metadata_text(_save(_picture(), "HEIF", exif=heic_exif.tobytes())) == \
        "a caption on a phone's photograph"

    camera = Image.Exif()
    camera[0x010E] = "OLYMPUS DIGITAL CAMERA"  # what the camera wrote itself
    camera.get_ifd(0x8769)[0x9286] = b"ASCII\0\0\0" + b"   "
    assert picture_metadata_text(_save(_picture(), "JPEG", exif=camera, comment=b"Created with GIMP")) == ""
    assert picture_metadata_text(b"\xff\xd8\xff\xe1not a picture") == ""  # its pixels' reader says why


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")


def test_a_pngs_words_after_its_pixels_and_its_exif_are_read_without_decoding_it() -> None:
    """Pillow decodes a PNG's pixels to reach the chunks after them (0.36 s for 12 megapixels): the chunks are
    walked instead, wherever they are; a compressed one stops at 1 MiB, as Pillow's cap does."""
    exif = Image.Exif()
    exif[0x010E] = "an EXIF caption in an eXIf chunk"
    data = _save(_picture(), "PNG", exif=exif.tobytes())
    end = data.rindex(b"IEND") - 4  # the IEND chunk's length field
    after = _png_chunk(b"tEXt", b"Comment\0written after the pixels")
    bomb = _png_chunk(b"zTXt", b"Notes\0\0" + zlib.compress(b"leak " * 2_000_000))
    text = picture_metadata_text(data[:end] + after + bomb + data[end:])
    lines = text.splitlines()
    assert lines[:2] == ["an EXIF caption in an eXIf chunk", "written after the pixels"]
    assert len(lines) == 3 and len(lines[2]) == 1024 * 1024  # the bomb's words, cut at its cap
    at = data.index(b"eXIf") + 4
    damaged = data[:at] + b"XXXX" + data[at + 4:]  # its EXIF block's header damaged: the other chunks still read
    assert picture_metadata_text(damaged[:end] + after + damaged[end:]) == "written after the pixels"


def test_a_picture_whose_pixels_give_nothing_is_read_in_part_by_its_metadata() -> None:
    pm = make_plugin_manager()
    leak = _one_line(prose(71, 120))
    exif = Image.Exif()
    exif[0x010E] = leak
    data = _save(_picture(), "JPEG", exif=exif)
    read = extract_bytes(data, detect_mime(data), pm, NO_OCR)
    assert (read.status, read.reason) == (TextStatus.PARTIAL, "image: OCR is off (--no-ocr); read: its metadata only")
    assert read.text == leak and read.regions == ((0, len(leak), PICTURE_METADATA_REGION),)
    plain = _save(_picture(), "JPEG")
    unread = extract_bytes(plain, detect_mime(plain), pm, NO_OCR)
    assert unread.status is TextStatus.UNSUPPORTED and unread.text == ""  # nothing to read: as before


def test_a_small_picture_with_a_caption_is_a_member_of_its_document_and_one_without_is_not(tmp_path) -> None:
    """An icon is too small to hold a line of pixels' text, and was passed over; its caption is words."""
    leak = _one_line(prose(72, 150))
    exif = Image.Exif()
    exif[0x010E] = leak
    icon = _save(Image.new("RGB", (48, 48), "white"), "JPEG", exif=exif)
    report = io.BytesIO(CARRIERS["docx"](prose(73, 200), 0).data)
    with zipfile.ZipFile(report, "a") as package:
        package.writestr("word/media/image1.jpeg", icon)
        package.writestr("word/media/image2.jpeg", _save(Image.new("RGB", (48, 48), "white"), "JPEG"))
    path = tmp_path / "report.docx"
    path.write_bytes(report.getvalue())
    from scanner.sources.extract import extract_file

    _, result = extract_file(path, make_plugin_manager(), NO_OCR)
    members = {record.path.split("!/")[-1]: got for record, got in result.members}
    assert list(members) == ["word/media/image1.jpeg"]
    assert members["word/media/image1.jpeg"].text == leak


@pytest.mark.parametrize("kind", ["jpeg-exif", "png-text", "docx-picture-metadata"])
def test_the_evasion_carriers_hold_the_leak_where_this_reader_finds_it(kind: str) -> None:
    leak = _one_line(prose(74, 200))
    carrier = CARRIERS[kind](leak, 0)
    pm = make_plugin_manager()
    result = extract_bytes(carrier.data, detect_mime(carrier.data), pm, NO_OCR)
    if kind.startswith("docx"):
        assert leak not in result.text  # the report's own text does not hold it: its picture does
        picture = next(m for m in zipfile.ZipFile(io.BytesIO(carrier.data)).namelist() if "media/" in m)
        result = extract_bytes(zipfile.ZipFile(io.BytesIO(carrier.data)).read(picture), "image/jpeg", pm, NO_OCR)
    assert leak in result.text


def test_pictures_read_before_are_read_again() -> None:
    by_version = {change.version: change for change in READER_CHANGES}
    assert "image/jpeg" in by_version[7].mimes and "image/png" in by_version[7].mimes
    assert "image/heic" in by_version[8].mimes and "image/avif" in by_version[8].mimes
