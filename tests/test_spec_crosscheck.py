"""The SystemVerilog package and the Rust/Python definition agree on every constant."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
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
    from edm.protocol import codec

    assert protocol.ADDR_ASID_LSB + protocol.ADDR_ASID_W == 8 * protocol.RREQ_EXT_BYTES
    word = codec.space_address((1 << protocol.ADDR_ASID_W) - 1, (1 << protocol.ADDR_ASID_LSB) - 8)
    assert word >> protocol.ADDR_ASID_LSB == (1 << protocol.ADDR_ASID_W) - 1
    assert codec.split_space_address(word) == ((1 << protocol.ADDR_ASID_W) - 1, (1 << protocol.ADDR_ASID_LSB) - 8)
    with pytest.raises(codec.CodecError, match="vaddr"):
        codec.space_address(1, 1 << protocol.ADDR_ASID_LSB)
    statuses = [protocol.STATUS_OK, protocol.STATUS_TIMEOUT, protocol.STATUS_ERROR, protocol.STATUS_DENIED]
    assert len(set(statuses)) == 4 and max(statuses) < 1 << protocol.HDR_OP_W


def test_link_fault_ordered_sets():
    # 802.3 Clause 46 (table 46-5): a fault column is /Q/ (0x9C) in lane 0 then
    # 0x00 0x00 0x01 (local) or 0x00 0x00 0x02 (remote); Clause 49 (figure
    # 49-7) codes two of them as an O0/O4 block, O codes 0x0, D1..D3 in bytes
    # 1..3 and D5..D7 in bytes 5..7. The constants (one definition, checked
    # against edm_pkg.sv above) and the reference codec must say exactly that,
    # and the four ordered-set block types must stay far from EDM's type.
    from edm.protocol import codec

    assert protocol.XGMII_SEQ == 0x9C and protocol.O_CODE_SEQ == 0
    for seq, lane3 in ((protocol.SEQ_LOCAL_FAULT, 0x01), (protocol.SEQ_REMOTE_FAULT, 0x02)):
        assert seq.to_bytes(3, "little") == bytes([0, 0, lane3])
        column = bytes([0x9C, 0, 0, lane3])
        word = (int.from_bytes(column * 2, "little"), 0x11)
        [block] = codec.xgmii_encode([word])
        assert block == (protocol.SYNC_CTRL, int.from_bytes(bytes([0x55, 0, 0, lane3, 0, 0, 0, lane3]), "little"))
        assert codec.xgmii_decode([block]) == [word]
    ordered = (protocol.BT_O0_C4, protocol.BT_O0_O4, protocol.BT_C4_O4, protocol.BT_O0_S4)
    assert ordered == (0x4B, 0x55, 0x2D, 0x66)
    assert all(bin(t ^ protocol.BT_EDM).count("1") >= 4 for t in ordered)
    assert protocol.LINK_FAULT_SEQS == 4 and protocol.LINK_FAULT_COLUMNS == 128


def test_write_outcome_bounds_hold_in_both_languages():
    """The bounds docs/protocol.md §4b derives, on the SystemVerilog values
    (equal to Rust's by the test above): every copy of an unresolved message
    lands inside the duplicate window, late copies have half the id space to
    be stale in, /A/'s map sits in /N/'s size field."""
    sv = parse_sv_package(SV_PACKAGE)
    assert sv["SUB_A"] not in (sv["SUB_MS"], sv["SUB_MT"], sv["SUB_MST"], sv["SUB_N"], sv["SUB_G"])
    assert (sv["ACK_MAP_LSB"], sv["ACK_MAP_W"]) == (sv["NG_SIZE_LSB"], sv["NG_SIZE_W"])
    assert sv["RETRY_UNRESOLVED"] <= sv["DUP_WINDOW_IDS"]
    assert sv["DUP_WINDOW_IDS"] + sv["RETRY_UNRESOLVED"] <= 2 ** (sv["NG_ID_W"] - 1)
    assert sv["DUP_RMW_RESULTS"] > sv["DEFAULT_MAX_ACTIVE_NOTIFS"]


# The scheduler's iteration is a function of the port count and of the registered
# request tree in both languages (edm_pkg::sw_pim_iter_cycles, spec::sw_pim_iter_cycles):
# Verilator elaborates the SystemVerilog one against Rust's values for every port count
# a switch can have, both settings, an $error (lint fails) on any difference.
def _sv_iteration_check(tmp_path: Path, expected: dict[tuple[int, bool], int]) -> subprocess.CompletedProcess:
    checks = "\n".join(
        f"  if (edm_pkg::sw_pim_iter_cycles({n}, 1'b{int(r)}) != {c}) begin : g_bad_{n}_{int(r)}\n"
        f"    $error(\"sw_pim_iter_cycles({n}, {int(r)}) = %0d, spec.rs: {c}\", "
        f"edm_pkg::sw_pim_iter_cycles({n}, 1'b{int(r)}));\n"
        f"  end" for (n, r), c in expected.items())
    top = tmp_path / "iter_check.sv"
    top.write_text(f"module iter_check;\n{checks}\nendmodule\n")
    return subprocess.run(["verilator", "--lint-only", "-Wall", "-Wno-DECLFILENAME", str(SV_PACKAGE), str(top),
                           "--top-module", "iter_check"], capture_output=True, text=True, check=False)


@pytest.mark.skipif(shutil.which("verilator") is None, reason="needs verilator")
def test_iteration_cycles_agree(tmp_path):
    expected = {(n, r): protocol.sw_pim_iter_cycles(n, r)
                for n in range(2, protocol.MAX_PORTS + 1) for r in (False, True)}
    # The closed forms: the paper's 3 by default; with the registered tree 3 stages and
    # a cycle per radix-4 level (docs/hardware.md).
    assert all(c == protocol.SW_PIM_ITER_CYCLES for (n, r), c in expected.items() if not r)
    assert all(c == 3 + max(1, math.ceil(math.log(n, 4) - 1e-9)) for (n, r), c in expected.items() if r)
    done = _sv_iteration_check(tmp_path, expected)
    assert done.returncode == 0, done.stderr[-2000:]
    # ... and it can fail, either way.
    for key in ((64, True), (64, False)):
        bad = _sv_iteration_check(tmp_path, {**expected, key: expected[key] + 1})
        assert bad.returncode != 0 and f"sw_pim_iter_cycles(64, {int(key[1])})" in bad.stderr
