"""RS-FEC on every link (`fec_ps`, `edm unloaded --fec rs`): each protocol pays
it once per link its unloaded operation crosses, counted by hand from its
message flow (docs/simulator.md, "FEC")."""

from __future__ import annotations

import pytest

from edm import protocol
from edm.cli import main
from edm.sim.unloaded import FEC_PS, unloaded_table

# Links crossed by a lone 64 B read and write: (read, write).
LINKS = {
    "edm": (4, 4),         # RREQ up, forwarded down, response up, down | /N/ up, /G/ down, data up, down
    "edm-paper": (4, 4),
    "ideal-srpt": (2, 2),  # data path only: no control blocks (pFabric's Ideal)
    "dctcp": (4, 2),       # request packet host-switch-host, response back | one packet
    "pfc_dcqcn": (4, 2),
    "pfabric": (4, 2),
    "cxl": (4, 2),
}


def test_rs_fec_constant_is_802_3_clause_91_budget():
    # A 5 280-bit RS(528,514) codeword takes 52.8 ns to arrive at 100 Gb/s; the
    # decoder cannot finish before the whole codeword is in.
    assert protocol.RS_FEC_100G_PS >= 5280 * 10  # ps at 10 ps per bit
    assert FEC_PS == {"none": 0, "rs": protocol.RS_FEC_100G_PS}


def test_every_link_pays_fec_once():
    fec = 100_000
    plain = {r["protocol"]: r for r in unloaded_table()}
    with_fec = {r["protocol"]: r for r in unloaded_table({"fec_ps": fec})}
    assert set(plain) == set(with_fec)
    for name, r in plain.items():
        for i, op in enumerate(("read", "write")):
            added_links = (with_fec[name][f"{op}_ns"] - r[f"{op}_ns"]) * 1e3 / fec
            assert added_links == pytest.approx(round(added_links)) and round(added_links) >= 2, (name, op)
            if name in LINKS:
                assert round(added_links) == LINKS[name][i], (name, op, added_links)
            # The paper's columns do not move.
            assert with_fec[name][f"{op}_table1_ns"] == r[f"{op}_table1_ns"]


def test_unloaded_command_names_the_fec(capsys):
    assert main(["unloaded", "--fec", "rs"]) == 0
    out = capsys.readouterr().out
    assert "RS-FEC 100 ns per link" in out and "--fec rs" in out
    assert main(["unloaded", "--fec", "bogus"]) == 2
