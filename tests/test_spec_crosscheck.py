"""The SystemVerilog package and the Rust/Python definition agree on every constant."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edm import protocol

SV_PACKAGE = Path(__file__).resolve().parents[1] / "rtl" / "common" / "edm_pkg.sv"
_LOCALPARAM = re.compile(r"localparam\s+[^=;]*?\b(\w+)\s*=\s*([^;]+);")


def parse_sv_literal(text: str) -> int:
    text = text.strip().replace("_", "")
    m = re.fullmatch(r"(\d+)?'([bdhoBDHO])([0-9a-fA-F]+)", text)
    if m:
        base = {"b": 2, "d": 10, "h": 16, "o": 8}[m.group(2).lower()]
        return int(m.group(3), base)
    if re.fullmatch(r"\d+", text):
        return int(text)
    raise ValueError(f"unsupported SystemVerilog literal {text!r}")


def parse_sv_package(path: Path) -> dict[str, int]:
    src = re.sub(r"//[^\n]*", "", path.read_text())
    out: dict[str, int] = {}
    for name, value in _LOCALPARAM.findall(src):
        assert name not in out, f"{path}: {name} defined twice"
        out[name] = parse_sv_literal(value)
    return out


def test_sv_literal_parser():
    assert parse_sv_literal("8'h2D") == 0x2D
    assert parse_sv_literal("2'b10") == 2
    assert parse_sv_literal("666200") == 666200


def test_every_constant_agrees():
    sv = parse_sv_package(SV_PACKAGE)
    py = protocol.SPEC
    assert len(py) > 50
    only_sv = sorted(set(sv) - set(py))
    only_rust = sorted(set(py) - set(sv))
    assert not only_sv, f"in {SV_PACKAGE.name} but not in spec.rs: {only_sv}"
    assert not only_rust, f"in spec.rs but not in {SV_PACKAGE.name}: {only_rust}"
    wrong = {n: (sv[n], py[n]) for n in py if sv[n] != py[n]}
    assert not wrong, f"values differ (sv, rust): {wrong}"


def test_crosscheck_detects_a_difference(tmp_path):
    # The check must be able to fail: change one code and it must notice.
    bad = tmp_path / "edm_pkg.sv"
    bad.write_text(SV_PACKAGE.read_text().replace("SUB_G = 8'h78", "SUB_G = 8'h79"))
    assert parse_sv_package(bad)["SUB_G"] != protocol.SUB_G


def test_control_sequence_constants_follow_from_the_crc8_polynomial():
    # docs/protocol.md §5a: the receiver reads a block's sequence number by
    # moving its CRC-8 register CTL_SEQ_INV_SHIFT zero bits further; that undoes
    # the 56 bits of payload bytes 0..6 iff 56 + shift is a multiple of the order
    # of x modulo the polynomial. Both constants come from spec.rs (and, by
    # test_every_constant_agrees, equal edm_pkg.sv's).
    poly = 0x100 | protocol.CRC8_POLY

    def shift(reg: int, bits: int) -> int:
        for _ in range(bits):
            reg <<= 1
            if reg & 0x100:
                reg ^= poly
        return reg

    order = next(k for k in range(1, 256) if shift(1, k) == 1)
    assert (56 + protocol.CTL_SEQ_INV_SHIFT) % order == 0
    assert all(shift(shift(s, 56), protocol.CTL_SEQ_INV_SHIFT) == s for s in range(1 << protocol.CTL_SEQ_W))
    assert protocol.CTL_SEQ_W == 8  # the CRC-8's register: every number moves it differently


def test_address_space_id_is_the_top_of_the_address_word():
    # docs/protocol.md §3.4: the ASID takes the address word's top bits, so no
    # unit grows; both languages name it (test_every_constant_agrees) and the
    # codec packs it there.
    from edm import codec

    assert protocol.ADDR_ASID_LSB + protocol.ADDR_ASID_W == 8 * protocol.RREQ_EXT_BYTES
    word = codec.space_address((1 << protocol.ADDR_ASID_W) - 1, (1 << protocol.ADDR_ASID_LSB) - 8)
    assert word >> protocol.ADDR_ASID_LSB == (1 << protocol.ADDR_ASID_W) - 1
    assert codec.split_space_address(word) == ((1 << protocol.ADDR_ASID_W) - 1, (1 << protocol.ADDR_ASID_LSB) - 8)
    with pytest.raises(codec.CodecError, match="vaddr"):
        codec.space_address(1, 1 << protocol.ADDR_ASID_LSB)
    statuses = [protocol.STATUS_OK, protocol.STATUS_TIMEOUT, protocol.STATUS_ERROR, protocol.STATUS_DENIED]
    assert len(set(statuses)) == 4 and max(statuses) < 1 << protocol.HDR_OP_W
