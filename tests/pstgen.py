"""A minimal writer of Outlook personal folders (`.pst`, the Unicode format of [MS-PST]) for tests.

No library writes PST files and none can be fetched with a stated licence, so the tests build theirs: the
node and block B-trees, heaps on nodes, property contexts and table contexts a reader walks to reach each
folder, message and attachment (allocation maps written valid, no encryption). It writes what a reader
needs, not what Outlook needs to open the file for writing (no search folders, no named properties).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

PT_LONG, PT_BOOLEAN, PT_UNICODE, PT_BINARY, PT_SYSTIME = 0x0003, 0x000B, 0x001F, 0x0102, 0x0040
_FIXED = {PT_LONG: 4, PT_BOOLEAN: 1}
_PAGE, _TRAILER, _AMAP_AT, _AMAP_SPAN = 512, 16, 0x4400, 253_952
_NID_MESSAGE_STORE, _NID_NAME_TO_ID_MAP, _NID_ROOT_FOLDER = 0x21, 0x61, 0x122
_NID_ATTACHMENT_TABLE = 0x671
_LTP = 0x1F  # the type of a subnode holding one large value
_IN_HEAP, _BLOCK_DATA = 3580, 8176  # the largest value kept in a heap; the most data a block holds
_FOLDER, _MESSAGE, _ATTACHMENT = 0x02, 0x04, 0x05
_HIERARCHY, _CONTENTS, _ASSOCIATED = 0x0D, 0x0E, 0x0F


@dataclass
class PstAttachment:
    name: str
    data: bytes
    method: int = 1  # PidTagAttachMethod: 1 by value, 5 an attached message (whose item this writer leaves out)


@dataclass
class PstMessage:
    subject: str
    body: str = ""
    html: bytes = b""
    sender: str = ""
    sender_address: str = ""
    headers: str = ""  # the transport headers, as a mail server wrote them
    rtf: bytes = b""  # a rich-text body, stored compressed as Outlook keeps it
    attachments: list[PstAttachment] = field(default_factory=list)


@dataclass
class PstFolder:
    name: str
    messages: list[PstMessage] = field(default_factory=list)
    folders: list[PstFolder] = field(default_factory=list)


@dataclass
class _Node:
    nid: int
    data: bytes
    parent: int = 0
    subnodes: list[_Node] = field(default_factory=list)


def weak_crc32(data: bytes) -> int:
    """[MS-PST] 5.3: CRC-32 from 0, without the final inversion."""
    return zlib.crc32(data, 0xFFFFFFFF) ^ 0xFFFFFFFF


def _signature(offset: int, bid: int) -> int:
    mixed = (offset ^ bid) & 0xFFFFFFFF
    return ((mixed >> 16) ^ mixed) & 0xFFFF


def _heap(client_signature: int, allocations: list[bytes]) -> bytes:
    """A heap on node in one block; the first allocation is the client's root (HID 0x20)."""
    body = bytearray(12)
    starts = []
    for allocation in allocations:
        starts.append(len(body))
        body += allocation
    starts.append(len(body))
    if len(body) % 2:
        body += b"\0"
    if len(body) > _BLOCK_DATA:
        raise ValueError("a heap over one block (a folder of many messages): keep folders under ~40 messages")
    page_map = len(body)
    body += struct.pack("<HH", len(allocations), 0) + struct.pack(f"<{len(starts)}H", *starts)
    struct.pack_into("<HBBII", body, 0, page_map, 0xEC, client_signature, 0x20 if allocations else 0, 0)
    return bytes(body)


def _hid(index: int) -> int:
    return (index + 1) << 5  # the allocation's index from 1, in the node's first block


def _property_bytes(kind: int, value: object) -> bytes:
    if kind == PT_UNICODE:
        return str(value).encode("utf-16-le")
    if kind == PT_LONG:
        return struct.pack("<i", int(value))  # type: ignore[call-overload]
    if kind == PT_BOOLEAN:
        return bytes([bool(value)])
    return bytes(value)  # type: ignore[call-overload]


def property_context(nid: int, properties: dict[int, tuple[int, object]], parent: int = 0) -> _Node:
    """A property context: a B-tree on the heap of (property id -> type, value or where it is: an allocation
    of the heap, or a subnode of its own for a value over `_IN_HEAP` bytes, as a long body is kept)."""
    values: list[bytes] = []
    subnodes: list[_Node] = []
    records = bytearray()
    for prop_id in sorted(properties):
        kind, value = properties[prop_id]
        raw = _property_bytes(kind, value)
        if kind in _FIXED:
            cell = raw.ljust(4, b"\0")
        elif len(raw) > _IN_HEAP:
            subnodes.append(_Node(((0x100 + len(subnodes)) << 5) | _LTP, raw))
            cell = struct.pack("<I", subnodes[-1].nid)
        else:
            cell = struct.pack("<I", _hid(2 + len(values)))
            values.append(raw)
        records += struct.pack("<HH", prop_id, kind) + cell
    header = struct.pack("<BBBBI", 0xB5, 2, 6, 0, _hid(1) if records else 0)
    return _Node(nid, _heap(0xBC, [header, bytes(records), *values]), parent, subnodes)


def table_context(columns: list[tuple[int, int]], rows: list[dict[int, object]]) -> bytes:
    """A table context: `columns` as (property id, type) after the row id and version; each row a dict by
    property id, its row id under 0x67F2."""
    allcols = [(0x67F2, PT_LONG), (0x67F3, PT_LONG), *columns]
    four = [c for c in allcols if c[1] not in _FIXED or _FIXED[c[1]] == 4]
    one = [c for c in allcols if _FIXED.get(c[1]) == 1]
    offsets: dict[int, int] = {}
    at = 0
    for prop_id, _kind in four:
        offsets[prop_id], at = at, at + 4
    end_four = end_two = at
    for prop_id, _kind in one:
        offsets[prop_id], at = at, at + 1
    end_one = at
    bitmap = (len(allcols) + 7) // 8
    row_size = end_one + bitmap
    values: list[bytes] = []
    first_value = 4  # allocations: TCINFO, row index header, row index records, rows, then the values
    matrix = bytearray()
    for row in rows:
        cells = bytearray(row_size)
        for number, (prop_id, kind) in enumerate(allcols):
            if prop_id not in row:
                continue
            raw = _property_bytes(kind, row[prop_id])
            if kind not in _FIXED:
                raw = struct.pack("<I", _hid(first_value + len(values)))
                values.append(_property_bytes(kind, row[prop_id]))
            cells[offsets[prop_id]:offsets[prop_id] + len(raw)] = raw
            cells[end_one + number // 8] |= 0x80 >> (number % 8)
        matrix += cells
    index_records = b"".join(struct.pack("<II", row[0x67F2], number) for number, row in
                             sorted(enumerate(rows), key=lambda item: int(item[1][0x67F2])))  # type: ignore[arg-type]
    descriptors = b"".join(struct.pack("<IHBB", (prop_id << 16) | kind, offsets[prop_id],
                                       _FIXED.get(kind, 4), number)
                           for number, (prop_id, kind) in sorted(enumerate(allcols), key=lambda c: c[1][0]))
    info = struct.pack("<BBHHHHIII", 0x7C, len(allcols), end_four, end_two, end_one, row_size,
                       _hid(1), _hid(3) if rows else 0, 0) + descriptors
    index_header = struct.pack("<BBBBI", 0xB5, 4, 4, 0, _hid(2) if rows else 0)
    return _heap(0x7C, [info, index_header, index_records, bytes(matrix), *values])


class _Layout:
    """Blocks and pages placed one after another past the first allocation map, around the later ones (one
    every `_AMAP_SPAN` bytes)."""

    def __init__(self) -> None:
        self.out = bytearray(_AMAP_AT + _PAGE)  # the header, then the first allocation map
        self.next_block = 4
        self.next_page = 4
        self.blocks: list[tuple[int, int, int]] = []  # (bid, offset, size)

    def _room(self, size: int) -> None:
        """Move past the next allocation map's page when `size` bytes from here would reach it."""
        offset = len(self.out)
        next_map = _AMAP_AT + -(-(offset - _AMAP_AT) // _AMAP_SPAN) * _AMAP_SPAN
        if offset <= next_map < offset + size:
            self.out += bytes(next_map + _PAGE - offset)

    def block(self, data: bytes, internal: bool = False) -> int:
        bid = self.next_block | (2 if internal else 0)
        self.next_block += 4
        size = (len(data) + _TRAILER + 63) // 64 * 64
        self._room(size)
        offset = len(self.out)
        trailer = struct.pack("<HHIQ", len(data), _signature(offset, bid), weak_crc32(data), bid)
        self.out += data.ljust(size - _TRAILER, b"\0") + trailer
        self.blocks.append((bid, offset, len(data)))
        return bid

    def page(self, entries: bytes, count: int, width: int, level: int, kind: int) -> tuple[int, int]:
        if len(self.out) % _PAGE:
            self.out += bytes(_PAGE - len(self.out) % _PAGE)
        self._room(_PAGE)
        bid, offset = self.next_page, len(self.out)
        self.next_page += 4
        body = entries.ljust(488, b"\0") + struct.pack("<BBBB4x", count, 488 // width, width, level)
        self.out += body + struct.pack("<BBHIQ", kind, kind, _signature(offset, bid), weak_crc32(body), bid)
        return bid, offset

    def tree(self, leaves: list[tuple[int, bytes]], width: int, kind: int) -> tuple[int, int]:
        """A B-tree of (key, entry) pages, levels added until one page holds the root."""
        level = 0
        while True:
            per_page = 488 // width
            pages = []
            for start in range(0, max(len(leaves), 1), per_page):
                chunk = leaves[start:start + per_page]
                bid, offset = self.page(b"".join(entry for _, entry in chunk), len(chunk), width, level, kind)
                pages.append((chunk[0][0] if chunk else 0, bid, offset))
            if len(pages) == 1:
                return pages[0][1], pages[0][2]
            leaves = [(key, struct.pack("<QQQ", key, bid, offset)) for key, bid, offset in pages]
            width, level = 24, level + 1


def _folder_nid(number: int, kind: int = _FOLDER) -> int:
    return (number << 5) | kind


def write_pst(root: PstFolder, store_name: str = "Personal Folders", orphans: list[PstMessage] | None = None,
              client: bytes = b"SM") -> bytes:
    """The bytes of a PST holding `root`'s folders (the top of the folder tree is the root folder itself), and
    `orphans`: messages whose folder is not in the file (as a deleted folder's messages may be). `client`
    b"SO" makes it an offline store (.ost)."""
    nodes: list[_Node] = [
        property_context(_NID_MESSAGE_STORE, {0x3001: (PT_UNICODE, store_name),
                                              0x0FF9: (PT_BINARY, bytes(range(16)))}),
        # one named property (a numeric id under the one GUID listed): a reader wants the map not empty
        property_context(_NID_NAME_TO_ID_MAP, {
            0x0001: (PT_LONG, 251), 0x0002: (PT_BINARY, bytes(range(16))),
            0x0003: (PT_BINARY, struct.pack("<IHH", 0x8501, 3 << 1, 0)), 0x0004: (PT_BINARY, b"")}),
    ]
    counters = {"folder": 0x400, "message": 0x10000}

    def add_folder(folder: PstFolder, nid: int, parent: int) -> None:
        base = nid & ~0x1F
        children = []
        for sub in folder.folders:
            counters["folder"] += 1
            children.append((sub, _folder_nid(counters["folder"])))
        messages = []
        for message in folder.messages:
            counters["message"] += 1
            messages.append((message, _folder_nid(counters["message"], _MESSAGE)))
        nodes.append(property_context(nid, {
            0x3001: (PT_UNICODE, folder.name), 0x3602: (PT_LONG, len(messages)), 0x3603: (PT_LONG, 0),
            0x360A: (PT_BOOLEAN, bool(children))}, parent))
        nodes.append(_Node(base | _HIERARCHY, table_context(
            [(0x3001, PT_UNICODE), (0x3602, PT_LONG), (0x3603, PT_LONG), (0x360A, PT_BOOLEAN)],
            [{0x67F2: child_nid, 0x67F3: 0, 0x3001: sub.name, 0x3602: len(sub.messages), 0x3603: 0,
              0x360A: bool(sub.folders)} for sub, child_nid in children])))
        nodes.append(_Node(base | _CONTENTS, table_context(
            [(0x0037, PT_UNICODE), (0x001A, PT_UNICODE)],
            [{0x67F2: message_nid, 0x67F3: 0, 0x0037: message.subject, 0x001A: "IPM.Note"}
             for message, message_nid in messages])))
        nodes.append(_Node(base | _ASSOCIATED, table_context([], [])))
        for sub, child_nid in children:
            add_folder(sub, child_nid, nid)
        for message, message_nid in messages:
            nodes.append(_message_node(message, message_nid, nid))

    add_folder(root, _NID_ROOT_FOLDER, _NID_ROOT_FOLDER)
    for message in orphans or []:
        counters["message"] += 1
        nodes.append(_message_node(message, _folder_nid(counters["message"], _MESSAGE), _folder_nid(0x3FF0)))
    return _assemble(nodes, client)


def _message_node(message: PstMessage, nid: int, parent: int) -> _Node:
    properties: dict[int, tuple[int, object]] = {0x001A: (PT_UNICODE, "IPM.Note"),
                                                 0x0037: (PT_UNICODE, message.subject)}
    if message.body:
        properties[0x1000] = (PT_UNICODE, message.body)
    if message.html:
        properties[0x1013] = (PT_BINARY, message.html)
    if message.sender:
        properties[0x0C1A] = (PT_UNICODE, message.sender)
    if message.sender_address:
        properties[0x0C1F] = (PT_UNICODE, message.sender_address)
    if message.headers:
        properties[0x007D] = (PT_UNICODE, message.headers)
    if message.rtf:
        from compressed_rtf import compress

        properties[0x1009] = (PT_BINARY, compress(message.rtf, compressed=True))
    node = property_context(nid, properties, parent)
    if message.attachments:
        rows = []
        for number, attachment in enumerate(message.attachments):
            sub_nid = _folder_nid(0x400 + number, _ATTACHMENT)
            rows.append({0x67F2: sub_nid, 0x67F3: 0, 0x0E20: len(attachment.data), 0x3704: attachment.name,
                         0x3705: attachment.method})
            properties = {0x3704: (PT_UNICODE, attachment.name), 0x3707: (PT_UNICODE, attachment.name),
                          0x3705: (PT_LONG, attachment.method), 0x0E20: (PT_LONG, len(attachment.data))}
            if attachment.method == 1:
                properties[0x3701] = (PT_BINARY, attachment.data)
            node.subnodes.append(property_context(sub_nid, properties))
        node.subnodes.append(_Node(_NID_ATTACHMENT_TABLE, table_context(
            [(0x0E20, PT_LONG), (0x3704, PT_UNICODE), (0x3705, PT_LONG)], rows)))
    return node


def _place(layout: _Layout, node: _Node) -> tuple[int, int]:
    """Write a node's data (in blocks under an XBLOCK when it outgrows one) and its subnodes, at any depth:
    the bids of its data and of its subnode block (0: none)."""
    pieces = [node.data[at:at + _BLOCK_DATA] for at in range(0, max(len(node.data), 1), _BLOCK_DATA)]
    if len(pieces) == 1:
        data_bid = layout.block(pieces[0])
    else:
        bids = [layout.block(piece) for piece in pieces]
        data_bid = layout.block(struct.pack(f"<BBHI{len(bids)}Q", 0x01, 1, len(bids), len(node.data), *bids),
                                internal=True)
    if not node.subnodes:
        return data_bid, 0
    entries = b"".join(struct.pack("<QQQ", sub.nid, *_place(layout, sub))
                       for sub in sorted(node.subnodes, key=lambda sub: sub.nid))
    return data_bid, layout.block(struct.pack("<BBH4x", 0x02, 0, len(node.subnodes)) + entries, internal=True)


def _assemble(nodes: list[_Node], client: bytes) -> bytes:
    layout = _Layout()
    nbt: list[tuple[int, bytes]] = []
    for node in nodes:
        data_bid, sub_bid = _place(layout, node)
        nbt.append((node.nid, struct.pack("<QQQI4x", node.nid, data_bid, sub_bid, node.parent)))
    bbt = [(bid, struct.pack("<QQHH4x", bid, offset, size, 2)) for bid, offset, size in layout.blocks]
    nbt_bid, nbt_offset = layout.tree(sorted(nbt), 32, 0x81)
    bbt_bid, bbt_offset = layout.tree(sorted(bbt), 24, 0x80)
    used = len(layout.out)
    maps = -(-(used - _AMAP_AT) // _AMAP_SPAN)
    out = layout.out.ljust(_AMAP_AT + maps * _AMAP_SPAN, b"\0")
    free = 0
    for number in range(maps):  # a bit for each 64 bytes from the map's own offset, the most significant first
        at = _AMAP_AT + number * _AMAP_SPAN
        slots = min(max(used - at, 0), _AMAP_SPAN) // 64 + bool((used - at) % 64 and used - at < _AMAP_SPAN)
        amap = bytearray(496)
        for slot in range(slots):
            amap[slot // 8] |= 0x80 >> (slot % 8)
        out[at:at + _PAGE] = bytes(amap) + struct.pack("<BBHIQ", 0x84, 0x84, 0, weak_crc32(bytes(amap)), 0)
        free += (_AMAP_SPAN // 64 - slots) * 64
    header = bytearray(564)
    struct.pack_into("<4s4x2sHHBB", header, 0, b"!BDN", client, 23, 19, 1, 1)
    struct.pack_into("<QQI", header, 24, 0, layout.next_page, 1)
    rgnid = [0x400 * 32] * 32  # the next node index of each type: above every one used
    struct.pack_into("<32I", header, 44, *rgnid)
    struct.pack_into("<4xQQQQQQQQB", header, 180, len(out), _AMAP_AT + (maps - 1) * _AMAP_SPAN, free, 0,
                     nbt_bid, nbt_offset, bbt_bid, bbt_offset, 0x02)
    header[256:512] = b"\xff" * 256
    struct.pack_into("<BB2xQ", header, 512, 0x80, 0, layout.next_block)
    struct.pack_into("<I", header, 4, weak_crc32(bytes(header[8:8 + 471])))
    struct.pack_into("<I", header, 524, weak_crc32(bytes(header[8:8 + 516])))
    out[:564] = header
    return bytes(out)
