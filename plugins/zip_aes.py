"""ZIP members encrypted by WinZip's AES scheme (AE-1 and AE-2), which 7-Zip, WinZip and most archivers
write when asked for a strong password; the standard library reads only the traditional cipher.

The scheme (WinZip's "AES Encryption Information" note): compression method 99, an extra field 0x9901
naming the key length and the real method; the member's data is a salt, a 2-byte password verifier, the
AES-CTR ciphertext of the compressed data (a little-endian counter from 1) and the first 10 bytes of its
HMAC-SHA1. Keys, HMAC key and verifier come from one PBKDF2-HMAC-SHA1 of 1,000 rounds. AES itself is
pycryptodomex (BSD), which py7zr already brings.
"""

from __future__ import annotations

import bz2
import dataclasses
import hashlib
import hmac
import lzma
import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from scanner.core.errors import ExtractionError

AES_METHOD = 99
_EXTRA_ID = 0x9901
_KEY_BYTES = {1: 16, 2: 24, 3: 32}  # strength 1, 2, 3: AES-128, -192, -256; the salt is half the key
_VERIFIER_BYTES = 2
_AUTH_BYTES = 10
_ROUNDS = 1000
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_LOCAL_SIGNATURE = b"PK\x03\x04"
_CHUNK = 64 * 1024
_STORED, _DEFLATED, _BZIP2, _LZMA = 0, 8, 12, 14


@dataclasses.dataclass(frozen=True)
class AesField:
    """The 0x9901 extra field: AE-1 keeps the CRC of the plain data, AE-2 leaves it 0 (the HMAC checks)."""

    version: int
    key_bytes: int
    method: int  # the compression method under the encryption


class WrongPassword(Exception):
    """The password's 2-byte verifier does not match."""


class NotAuthentic(WrongPassword):
    """The verifier matches but the HMAC does not: the data was damaged or altered after it was encrypted (or,
    one time in 65,536, a wrong password passed the verifier)."""


def aes_field(extra: bytes) -> AesField | None:
    """The AES field among a member's extra fields, None when absent or malformed."""
    at = 0
    while at + 4 <= len(extra):
        field_id, size = struct.unpack_from("<HH", extra, at)
        body = extra[at + 4:at + 4 + size]
        if field_id == _EXTRA_ID and len(body) >= 7 and body[2:4] == b"AE":
            version, strength, method = struct.unpack_from("<H", body)[0], body[4], struct.unpack_from("<H", body, 5)[0]
            key_bytes = _KEY_BYTES.get(strength)
            return AesField(version, key_bytes, method) if key_bytes else None
        at += 4 + size
    return None


def member_payload(read_at: Callable[[int, int], bytes], header_offset: int, compress_size: int) -> bytes:
    """The member's stored bytes, after its local header (whose name and extra lengths may differ from the
    central directory's); `read_at(offset, size)`: the archive's bytes there (fewer at its end)."""
    head = read_at(header_offset, _LOCAL_HEADER.size)
    if len(head) < _LOCAL_HEADER.size or head[:4] != _LOCAL_SIGNATURE:
        raise ExtractionError("the member's local header is missing", status="corrupt")
    name_length, extra_length = _LOCAL_HEADER.unpack(head)[-2:]
    start = header_offset + _LOCAL_HEADER.size + name_length + extra_length
    payload = read_at(start, compress_size)
    if len(payload) < compress_size:
        raise ExtractionError("the member is cut short", status="corrupt")
    return payload


def decrypt(payload: bytes, field: AesField, password: bytes) -> bytes:
    """The compressed data under the encryption; `WrongPassword` when `password` is not the one."""
    from Cryptodome.Cipher import AES
    from Cryptodome.Util import Counter

    salt_bytes = field.key_bytes // 2
    if len(payload) < salt_bytes + _VERIFIER_BYTES + _AUTH_BYTES:
        raise ExtractionError("the AES-encrypted member is shorter than its header", status="corrupt")
    salt = payload[:salt_bytes]
    verifier = payload[salt_bytes:salt_bytes + _VERIFIER_BYTES]
    ciphertext = payload[salt_bytes + _VERIFIER_BYTES:len(payload) - _AUTH_BYTES]
    keys = hashlib.pbkdf2_hmac("sha1", password, salt, _ROUNDS, 2 * field.key_bytes + _VERIFIER_BYTES)
    if not hmac.compare_digest(keys[-_VERIFIER_BYTES:], verifier):
        raise WrongPassword
    auth = hmac.new(keys[field.key_bytes:2 * field.key_bytes], ciphertext, hashlib.sha1).digest()[:_AUTH_BYTES]
    if not hmac.compare_digest(auth, payload[-_AUTH_BYTES:]):
        raise NotAuthentic
    counter = Counter.new(128, initial_value=1, little_endian=True)
    return AES.new(keys[:field.key_bytes], AES.MODE_CTR, counter=counter).decrypt(ciphertext)


def inflated(compressed: bytes, method: int) -> Iterator[bytes]:
    """The plain data in chunks of at most 64 KB, so a bomb is stopped by the budget while it inflates."""
    if method == _STORED:
        for at in range(0, len(compressed), _CHUNK):
            yield compressed[at:at + _CHUNK]
        return
    if method == _DEFLATED:
        inflater = zlib.decompressobj(-15)
        pending = compressed
        while pending and not inflater.eof:
            chunk = inflater.decompress(pending, _CHUNK)
            pending = inflater.unconsumed_tail
            if chunk:
                yield chunk
        if tail := inflater.flush():
            yield tail
        return
    decompressor: Any
    if method == _BZIP2:
        decompressor, body = bz2.BZ2Decompressor(), compressed
    elif method == _LZMA:
        decompressor, body = _lzma_decompressor(compressed)
    else:
        raise ExtractionError(f"compression method {method} under AES is not supported", status="unsupported")
    chunk = decompressor.decompress(body, _CHUNK)
    while True:
        if chunk:
            yield chunk
        if decompressor.eof or decompressor.needs_input:
            return
        chunk = decompressor.decompress(b"", _CHUNK)


def _lzma_decompressor(compressed: bytes) -> tuple[Any, bytes]:
    """ZIP's LZMA: a 4-byte header (version, size of the properties), 5 bytes of properties, a raw LZMA1 stream."""
    if len(compressed) < 9:
        raise ExtractionError("LZMA member shorter than its header", status="corrupt")
    size = struct.unpack_from("<H", compressed, 2)[0]
    props = compressed[4:4 + size]
    if size != 5 or props[0] >= 9 * 5 * 5:
        raise ExtractionError("LZMA member with malformed properties", status="corrupt")
    lc, rest = props[0] % 9, props[0] // 9
    lp, pb = rest % 5, rest // 5
    dict_size = struct.unpack_from("<I", props, 1)[0]
    filters = [{"id": lzma.FILTER_LZMA1, "dict_size": dict_size, "lc": lc, "lp": lp, "pb": pb}]
    return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters), compressed[4 + size:]
