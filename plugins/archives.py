"""Archives: ZIP, TAR (plain, gzip, bzip2, xz, zstd), single gzip/bzip2/xz/zstd streams, and 7z.

ZIP and TAR are read with the standard library, member by member, so only
one member's bytes are held at a time; 7z through py7zr (LGPL-2.1, pure
Python), whose solid blocks are inflated whole, into writers that charge the
shared budget as they fill. Every inflated byte goes through the `Budget`
of `scanner.sources.extract.containers`, which stops bombs while they
inflate. Encrypted members are listed `encrypted`; links and devices in a
TAR are listed `skipped` with what they point at.
"""

from __future__ import annotations

import bz2
import calendar
import gzip
import io
import lzma
import os
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from functools import partial
from typing import IO, Any, BinaryIO, Literal, cast

from scanner.core.errors import ExtractionError
from scanner.sources.plugins import Member, Unpacker, hookimpl
from scanner_plugins import zip_aes

ZIP = "application/zip"
TAR = "application/x-tar"
GZIP = "application/gzip"
BZIP2 = "application/x-bzip2"
XZ = "application/x-xz"
SEVEN_ZIP = "application/x-7z-compressed"
_TAR_MAGIC_AT = 257
_NS = 1_000_000_000
ZSTD = "application/zstd"


def _zstd_reader(raw: IO[bytes]) -> Any:
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)


_STREAMS: dict[str, Callable[[IO[bytes]], Any]] = {  # the decompressed stream, file-like
    GZIP: lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    "application/x-gzip": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    BZIP2: lambda raw: bz2.BZ2File(raw, mode="rb"),
    XZ: lambda raw: lzma.LZMAFile(raw, mode="rb"),
    ZSTD: _zstd_reader,  # Zstandard (.zst, .tar.zst): what current Linux distributions and tools pack with
    "application/x-zstd": _zstd_reader,
}
# the streams tarfile cannot open itself: read through their decompressor, a member at a time
_TAR_THROUGH_STREAM = (ZSTD, "application/x-zstd")
_ZSTD_MAGIC, _ZSTD_SKIPPABLE = 0xFD2FB528, 0x184D2A50  # a frame; a skippable frame (its low 4 bits any)


def zstd_cut_short(data: bytes) -> str:
    """Why a Zstandard stream's frames do not end where its bytes do ("" when they do), found by walking the
    frames' and blocks' headers without decompressing (RFC 8878): its decompressor reads a cut stream to
    its last whole block and stops without a word, where gzip, bzip2 and xz raise."""
    at = 0
    while at < len(data):
        if len(data) - at < 4:
            return f"ends inside a frame's magic number ({len(data) - at} bytes)"
        magic = int.from_bytes(data[at:at + 4], "little")
        if magic & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
            size = int.from_bytes(data[at + 4:at + 8], "little")
            at += 8 + size
            if len(data) < at:
                return "cut short inside a skippable frame"
            continue
        if magic != _ZSTD_MAGIC or len(data) - at < 6:
            return f"not a Zstandard frame at byte {at}" if magic != _ZSTD_MAGIC else "cut short in a frame header"
        descriptor = data[at + 4]
        single_segment, checksum = descriptor >> 5 & 1, descriptor >> 2 & 1
        content_size_bytes = (0, 2, 4, 8)[descriptor >> 6] or (1 if single_segment else 0)
        at += 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 3] + content_size_bytes
        last = False
        while not last:
            if len(data) - at < 3:
                return "cut short: a block header is missing"
            header = int.from_bytes(data[at:at + 3], "little")
            last, kind, size = bool(header & 1), header >> 1 & 3, header >> 3
            at += 3 + (1 if kind == 1 else size)  # an RLE block holds its one byte
            if len(data) < at:
                return f"cut short: a block of {size} bytes lacks {at - len(data)}"
        at += 4 * checksum
        if len(data) < at:
            return "cut short: the frame's checksum is missing"
    return ""


def unpack_zip(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    return zip_members(data, budget)


def unpack_zip_file(stream: BinaryIO, mime: str, budget: Any) -> Iterator[Member]:
    """A ZIP over the size held in memory (an export, a dump of documents), read from disk a member at a time;
    a member itself over that size is named `too_large`, not read."""
    return zip_members(stream, budget, largest=budget.limits.max_bytes)


def zip_members(source: bytes | BinaryIO, budget: Any, wanted: Callable[[str], bool] | None = None,
                largest: int | None = None) -> Iterator[Member]:
    """The members of a ZIP, its bytes or the file (those whose name `wanted` accepts, when given), read
    through `budget`; one over `largest` bytes is named `too_large`, not read."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source)
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise ExtractionError(f"not a readable ZIP archive: {exc}", status="corrupt") from exc
    for info in infos:
        if info.is_dir() or (wanted is not None and not wanted(info.filename)):
            continue
        mtime = _zip_time(info.date_time)
        if largest is not None and info.file_size > largest:
            yield Member(info.filename, None, "too_large", f"{info.file_size} bytes > max_bytes {largest}", mtime)
            continue
        if info.flag_bits & 0x1:
            yield _encrypted_zip_member(source, archive, info, budget, mtime)
            continue
        try:
            with archive.open(info) as stream:
                content = budget.read(stream, f"member {info.filename!r}", info.compress_size)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
            yield Member(info.filename, None, "corrupt", f"unreadable ZIP member: {exc}", mtime)
            continue
        yield Member(info.filename, content, mtime_ns=mtime)


def _encrypted_zip_member(source: bytes | BinaryIO, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Any,
                          mtime: int) -> Member:
    """An encrypted member read with the first given password that opens it (ZipCrypto: its one-byte check
    passes one wrong password in 256, whose CRC then fails: the next is tried), else named `encrypted`."""
    if info.compress_type == zip_aes.AES_METHOD:
        return _aes_zip_member(source, info, budget, mtime)
    for password in budget.limits.passwords:
        try:
            with archive.open(info, pwd=password.encode()) as stream:
                content = budget.read(stream, f"member {info.filename!r}", info.compress_size)
        except (RuntimeError, zipfile.BadZipFile, zlib.error):  # a wrong password
            continue
        except (OSError, ValueError, EOFError, NotImplementedError) as exc:
            return Member(info.filename, None, "corrupt", f"unreadable ZIP member: {exc}", mtime)
        return Member(info.filename, content, mtime_ns=mtime, decrypted=True)
    return Member(info.filename, None, "encrypted", budget.limits.locked("encrypted ZIP member"), mtime)


def _aes_zip_member(source: bytes | BinaryIO, info: zipfile.ZipInfo, budget: Any, mtime: int) -> Member:
    """A WinZip AES member read with the first given password its verifier and HMAC accept, else `encrypted`;
    `corrupt` when a password passes the verifier but the HMAC (or AE-1's CRC) fails: altered after encryption."""
    what = "AES-encrypted ZIP member"
    field = zip_aes.aes_field(info.extra)
    if field is None:
        return Member(info.filename, None, "corrupt", f"{what} without its AES field", mtime)
    altered = False
    for password in budget.limits.passwords:
        try:
            compressed = zip_aes.decrypt(zip_aes.member_payload(partial(_read_at, source), info.header_offset,
                                                                info.compress_size), field, password.encode())
            content = budget.read_chunks(zip_aes.inflated(compressed, field.method), f"member {info.filename!r}",
                                         info.compress_size)
        except zip_aes.NotAuthentic:
            altered = True
            continue
        except zip_aes.WrongPassword:
            continue
        except ExtractionError as exc:
            if exc.status == "too_large":
                raise
            return Member(info.filename, None, exc.status, f"{what}: {exc}", mtime)
        except (OSError, ValueError, EOFError, zlib.error, lzma.LZMAError) as exc:
            return Member(info.filename, None, "corrupt", f"{what}: unreadable: {exc}", mtime)
        if field.version == 1 and zlib.crc32(content) != info.CRC:
            return Member(info.filename, None, "corrupt", f"{what}: its CRC does not match once decrypted", mtime)
        return Member(info.filename, content, mtime_ns=mtime, decrypted=True)
    if altered:
        return Member(info.filename, None, "corrupt", f"{what}: a password given passes its check but its "
                      "authentication code does not match: damaged or altered after it was encrypted", mtime)
    return Member(info.filename, None, "encrypted", budget.limits.locked(what), mtime)


def _read_at(source: bytes | BinaryIO, offset: int, size: int) -> bytes:
    """`size` bytes of an archive from `offset` (fewer at its end), held or on disk."""
    if isinstance(source, bytes):
        return source[offset:offset + size]
    source.seek(offset)
    return source.read(size)


def _zip_time(date_time: tuple[int, int, int, int, int, int]) -> int:
    try:
        return calendar.timegm((*date_time, 0, 0, 0)) * _NS
    except (OverflowError, ValueError):
        return 0


def _is_tar(head: bytes) -> bool:
    return head[_TAR_MAGIC_AT:_TAR_MAGIC_AT + 5] == b"ustar"


def unpack_tar(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """A TAR, or a gzip/bzip2/xz stream: the TAR inside it, else its one decompressed member."""
    opener = _STREAMS.get(mime)
    if opener is not None and not _holds_tar(opener, io.BytesIO(data), mime):
        yield _single_stream(data, mime, opener, budget)
        return
    archive = (_opened_tar(_STREAMS[mime](io.BytesIO(data)), "r|") if mime in _TAR_THROUGH_STREAM
               else _opened_tar(io.BytesIO(data), "r:*"))
    yield from _tar_members(archive, budget, len(data))
    cut = zstd_cut_short(data) if mime in _TAR_THROUGH_STREAM else ""
    if cut:  # the members before it were read whole (one the cut fell in raised above)
        raise ExtractionError(f"zstd stream {cut}", status="corrupt")


def unpack_tar_file(stream: BinaryIO, mime: str, budget: Any) -> Iterator[Member]:
    """A TAR (plain, gzip, bzip2 or xz) over the size held in memory (a folder's backup), read from disk in one
    pass, a member at a time; a member itself over that size is named `too_large`, not read. A compressed
    stream that holds no TAR, and a Zstandard one (whose cut end only its bytes tell), stay unread."""
    if mime in _TAR_THROUGH_STREAM:
        raise ExtractionError("a Zstandard stream over max_bytes is not read from disk", status="too_large")
    opener = _STREAMS.get(mime)
    if opener is not None:
        if not _holds_tar(opener, stream, mime):
            raise ExtractionError("a compressed file over max_bytes that holds no TAR is not read",
                                  status="too_large")
        stream.seek(0)
    archive = _opened_tar(stream, "r|*")
    yield from _tar_members(archive, budget, os.fstat(stream.fileno()).st_size, budget.limits.max_bytes)


def _holds_tar(opener: Callable[[IO[bytes]], Any], raw: IO[bytes], mime: str) -> bool:
    """Whether a compressed stream holds a TAR (the magic of its first block); `corrupt` when it does not
    decompress."""
    try:
        head = opener(raw).read(_TAR_MAGIC_AT + 8)
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        raise ExtractionError(f"not a readable {mime.rsplit('/', 1)[-1]} stream: {exc}", status="corrupt") from exc
    return _is_tar(head)


def _opened_tar(fileobj: IO[bytes], mode: Literal["r|", "r|*", "r:*"]) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=fileobj, mode=mode)
    except (tarfile.TarError, OSError, EOFError, lzma.LZMAError) as exc:
        raise ExtractionError(f"not a readable TAR archive: {exc}", status="corrupt") from exc


def _tar_members(archive: tarfile.TarFile, budget: Any, packed: int,
                 largest: int | None = None) -> Iterator[Member]:
    """Each member of an opened TAR, in order, read through `budget` (`packed`: the archive's bytes; a member
    over `largest` bytes is named `too_large`, not read)."""
    with archive:
        while True:
            try:
                info = archive.next()
            except (tarfile.TarError, OSError, EOFError, lzma.LZMAError) as exc:
                raise ExtractionError(f"TAR archive cut short or damaged: {exc}", status="corrupt") from exc
            if info is None:
                return
            if info.isdir():
                continue
            mtime = int(info.mtime) * _NS if info.mtime else 0
            if not info.isfile():
                what = f"a link to {info.linkname!r}" if info.issym() or info.islnk() else "not a regular file"
                yield Member(info.name, None, "skipped", f"TAR member is {what}", mtime)
                continue
            if largest is not None and info.size > largest:
                yield Member(info.name, None, "too_large", f"{info.size} bytes > max_bytes {largest}", mtime)
                continue
            stream = archive.extractfile(info)
            if stream is None:
                yield Member(info.name, None, "corrupt", "TAR member without data", mtime)
                continue
            try:
                content = budget.read(stream, f"member {info.name!r}", packed)
            except (tarfile.TarError, OSError, EOFError, lzma.LZMAError) as exc:
                raise ExtractionError(f"TAR member {info.name!r} cut short: {exc}", status="corrupt") from exc
            yield Member(info.name, content, mtime_ns=mtime)


ANDROID_BACKUP = "application/x-android-backup"
_ANDROID_MAGIC = b"ANDROID BACKUP\n"


def unpack_android_backup(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    return _android_backup(io.BytesIO(data), len(data), budget)


def unpack_android_backup_file(stream: BinaryIO, mime: str, budget: Any) -> Iterator[Member]:
    return _android_backup(stream, os.fstat(stream.fileno()).st_size, budget, budget.limits.max_bytes)


def _android_backup(stream: IO[bytes], packed: int, budget: Any, largest: int | None = None) -> Iterator[Member]:
    """An Android backup (`adb backup`, `.ab`: a phone's apps and their data, their chat databases among them):
    four header lines (the magic, a version, whether it is compressed, its encryption), then a TAR, deflated
    when it says so; its members read as a TAR's. One encrypted with the user's password is said, not read."""
    header = [stream.readline(64) for _ in range(4)]
    if header[0] != _ANDROID_MAGIC:
        raise ExtractionError("not an Android backup: no header", status="corrupt")
    encryption = header[3].strip().decode("ascii", "replace")
    if encryption != "none":
        raise ExtractionError(f"an Android backup encrypted with its owner's password ({encryption})",
                              status="encrypted")
    body = cast("IO[bytes]", io.BufferedReader(_Inflating(stream))) if header[2].strip() == b"1" else stream
    try:
        archive = tarfile.open(fileobj=body, mode="r|")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise ExtractionError(f"not a readable Android backup: {exc}", status="corrupt") from exc
    try:
        yield from _tar_members(archive, budget, packed, largest)
    except zlib.error as exc:
        raise ExtractionError(f"Android backup cut short or damaged: {exc}", status="corrupt") from exc


class _Inflating(io.RawIOBase):
    """A zlib stream read as the bytes it inflates to, a little at a time (a backup runs to gigabytes)."""

    _STEP = 16 * 1024  # compressed bytes inflated at a time: at most ~16 MB of output held for a bomb's

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw, self.inflater, self.pending = raw, zlib.decompressobj(), b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending and not self.inflater.eof:
            chunk = self.raw.read(self._STEP)
            if not chunk:
                break
            self.pending = self.inflater.decompress(chunk)
        count = min(len(buffer), len(self.pending))
        buffer[:count] = self.pending[:count]
        self.pending = self.pending[count:]
        return count


def _single_stream(data: bytes, mime: str, opener: Callable[[IO[bytes]], Any], budget: Any) -> Member:
    """The one file a gzip/bzip2/xz/zstd stream holds, named as gzip recorded it (else "content")."""
    name = _gzip_name(data) if "gzip" in mime else ""
    try:
        content = budget.read(opener(io.BytesIO(data)), "the compressed stream", len(data))
    except (OSError, EOFError, lzma.LZMAError, ValueError) as exc:
        return Member(name or "content", None, "corrupt", f"compressed stream cut short: {exc}")
    cut = zstd_cut_short(data) if mime in _TAR_THROUGH_STREAM else ""
    if cut:
        return Member(name or "content", None, "corrupt", f"compressed stream cut short: zstd stream {cut}")
    return Member(name or "content", content)


def _gzip_name(data: bytes) -> str:
    """The original file name a gzip header carries (FNAME), if any."""
    if len(data) < 10 or not data[3] & 0x08:
        return ""
    at = 10
    if data[3] & 0x04:  # FEXTRA comes first
        at += 2 + int.from_bytes(data[10:12], "little")
    end = data.find(b"\0", at, at + 1024)
    return data[at:end].decode("latin-1") if end > at else ""


def unpack_7z_file(stream: BinaryIO, mime: str, budget: Any) -> Iterator[Member]:
    """A 7z archive over the size held in memory, read from disk by libarchive a block at a time (py7zr inflates
    a solid block whole); its encrypted members are named `encrypted` (libarchive is not given passwords)."""
    from scanner_plugins.libarchive_formats import unpack_libarchive_file

    return unpack_libarchive_file(stream, mime, budget)


def unpack_7z(data: bytes, mime: str, budget: Any) -> Iterator[Member]:
    """The members of a 7z archive; an encrypted one opened with the first given password that extracts it
    (a wrong one fails its names' decoding or its members' checks: the next is tried)."""
    import py7zr
    import py7zr.io

    entries: list[Any] = []
    for password in (None, *budget.limits.passwords):
        try:
            archive = py7zr.SevenZipFile(io.BytesIO(data), password=password)
        except py7zr.exceptions.PasswordRequired:  # its names are encrypted too
            continue
        except Exception as exc:
            if password is not None:  # names decrypted with a wrong password are noise: any parser error
                continue
            if isinstance(exc, (py7zr.exceptions.ArchiveError, OSError, EOFError, ValueError, KeyError)):
                raise ExtractionError(f"not a readable 7z archive: {exc}", status="corrupt") from exc
            raise
        with archive:
            entries = [entry for entry in archive.list() if not entry.is_directory]
            if password is None and archive.needs_password():
                continue
            factory = _BudgetedFactory(budget)
            try:
                archive.extractall(factory=cast("py7zr.io.WriterFactory", factory))  # the protocol it calls
            except ExtractionError:
                raise
            except Exception as exc:
                if password is not None:  # a wrong password: its members fail their checks
                    continue
                raise ExtractionError(f"7z archive damaged: {type(exc).__name__}: {exc}",
                                      status="corrupt") from exc
        for entry in entries:
            mtime = int(entry.creationtime.timestamp() * _NS) if entry.creationtime else 0
            written = factory.products.get(entry.filename)
            if written is None:
                yield Member(entry.filename, None, "corrupt", "7z member not found in its stream", mtime)
            else:
                yield Member(entry.filename, written.content if written.closed else written.getvalue(),
                             mtime_ns=mtime, decrypted=password is not None)
        return
    if not entries:
        raise ExtractionError(budget.limits.locked("7z archive with encrypted names"), status="encrypted")
    for entry in entries:
        yield Member(entry.filename, None, "encrypted", budget.limits.locked("encrypted 7z member"))


class _BudgetedWriter(io.BytesIO):
    """A member's bytes as py7zr inflates them, charged to the budget as they come."""

    def __init__(self, budget: Any, name: str) -> None:
        super().__init__()
        self.budget = budget
        self.name = name
        self.content = b""

    def write(self, chunk: Any) -> int:
        self.budget.take(len(chunk), f"member {self.name!r}")
        return super().write(chunk)

    def size(self) -> int:
        return len(self.content) if self.closed else len(self.getbuffer())

    def close(self) -> None:
        """py7zr closes each member's writer when it is done: its bytes are kept."""
        if not self.closed:
            self.content = self.getvalue()
        super().close()


class _BudgetedFactory:
    def __init__(self, budget: Any) -> None:
        self.budget = budget
        self.products: dict[str, _BudgetedWriter] = {}

    def create(self, filename: str) -> _BudgetedWriter:
        self.products[filename] = _BudgetedWriter(self.budget, filename)
        return self.products[filename]


@hookimpl
def scanner_unpackers() -> list[Unpacker]:
    return [
        Unpacker(name="zip", mimes=(ZIP, "application/x-zip-compressed"), priority=50, unpack=unpack_zip,
                 unpack_file=unpack_zip_file),
        Unpacker(name="tar", mimes=(TAR, GZIP, "application/x-gzip", BZIP2, XZ, *_TAR_THROUGH_STREAM), priority=50,
                 unpack=unpack_tar, unpack_file=unpack_tar_file),
        Unpacker(name="7z", mimes=(SEVEN_ZIP,), priority=50, unpack=unpack_7z, unpack_file=unpack_7z_file),
        Unpacker(name="android-backup", mimes=(ANDROID_BACKUP,), priority=50, unpack=unpack_android_backup,
                 unpack_file=unpack_android_backup_file),
    ]
