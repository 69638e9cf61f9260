"""The signal names an FST waveform holds, read from its hierarchy block
(GTKWave's fstapi format: blocks of type byte + 8-byte big-endian length; the
hierarchy gzip- or LZ4-compressed). Enough to check what a trace contains
without gtkwave's fst2vcd."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

HIER_GZ, HIER_LZ4, HIER_LZ4DUO = 4, 6, 7
SCOPE, UPSCOPE, ATTR_BEGIN, ATTR_END = 254, 255, 252, 253


def _lz4_length(n: int, src: bytes, i: int) -> tuple[int, int]:
    """An LZ4 length: 15 in its token's nibble means bytes follow, added up to the first below 255."""
    if n == 15:
        while True:
            n += src[i]
            i += 1
            if src[i - 1] != 255:
                break
    return n, i


def lz4_block(src: bytes, size: int) -> bytes:
    """Decompresses one raw LZ4 block (no frame) of `size` bytes."""
    out, i = bytearray(), 0
    while i < len(src):
        token = src[i]
        n, i = _lz4_length(token >> 4, src, i + 1)
        out += src[i:i + n]
        i += n
        if i >= len(src):
            break
        offset = src[i] | src[i + 1] << 8
        m, i = _lz4_length(token & 15, src, i + 2)
        for _ in range(m + 4):   # byte by byte: a match may overlap what it copies
            out.append(out[-offset])
    assert len(out) == size, f"LZ4 block: {len(out)} bytes, expected {size}"
    return bytes(out)


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def hierarchy(path: Path) -> bytes:
    """The uncompressed hierarchy block of an FST file."""
    data = Path(path).read_bytes()
    i = 0
    while i < len(data):
        kind, length = data[i], struct.unpack(">Q", data[i + 1:i + 9])[0]
        body = data[i + 9:i + 1 + length]
        size = struct.unpack(">Q", body[:8])[0]
        if kind == HIER_GZ:
            return zlib.decompress(body[8:], 15 + 32)
        if kind == HIER_LZ4:
            return lz4_block(body[8:], size)
        if kind == HIER_LZ4DUO:
            once, j = _varint(body, 8)
            return lz4_block(lz4_block(body[j:], once), size)
        i += 1 + length
    raise ValueError(f"{path}: no hierarchy block")


def signals(path: Path) -> list[str]:
    """Every variable's dotted name (TOP.edm_fifo.clk, ...)."""
    h, i, scope, names = hierarchy(path), 0, [], []

    def string() -> str:
        nonlocal i
        end = h.index(0, i)
        s = h[i:end].decode()
        i = end + 1
        return s

    while i < len(h):
        tag = h[i]
        i += 1
        if tag == SCOPE:
            i += 1          # scope type
            scope.append(string())
            string()        # component
        elif tag == UPSCOPE:
            scope.pop()
        elif tag == ATTR_BEGIN:
            i += 2          # attribute type and subtype
            string()
            _, i = _varint(h, i)
        elif tag == ATTR_END:
            pass
        else:               # a variable: direction, name, length, alias
            i += 1
            names.append(".".join(scope + [string()]))
            _, i = _varint(h, i)
            _, i = _varint(h, i)
    return names
