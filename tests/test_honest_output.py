"""Summaries and plots that say what they are: a saturated or short run is
flagged, nothing is averaged unasked, one seed shows no interval, and flags a
trace workload cannot honour are refused."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from edm.protocol import codec
from edm.cli import main
from edm.plot import build_report
from edm.sweep import ResultStore

TRACE = "0 1 0 1 16 64 0\n1 3 1 0 64 -1 10\n"


def test_simulate_warns_when_saturated(tmp_path, capsys):
    rc = main(["simulate", "--nodes", "16", "--load", "1.5", "--messages", "2000", "--quiet",
               "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert rc == 0 and summary["stable"] is False
    assert "warning: past saturation" in err and "stable = false" in err


def test_simulate_is_quiet_when_stable(tmp_path, capsys):
    assert main(["simulate", "--nodes", "16", "--load", "0.2", "--messages", "20000", "--quiet",
                 "--out", str(tmp_path / "o")]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("flag", [["--load", "0.5"], ["--messages", "10"]])
def test_trace_refuses_load_and_messages(tmp_path, capsys, flag):
    trace = tmp_path / "t.trace"
    trace.write_text(TRACE)
    rc = main(["simulate", "--nodes", "4", "--workload", str(trace), *flag, "--quiet", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert f"'{flag[0][2:]}' does not apply to the trace workload" in err and f"flag {flag[0]}" in err
    assert not (tmp_path / "o").exists()


def _store(folder: Path, configs: list[dict], value=lambda c: float(c.get("seed", 0))) -> None:
    store = ResultStore(folder)
    for c in configs:
        store.save("sweep_runners:square", c, {"y": value(c)}, 0.0, inputs={})


def test_plot_refuses_to_average_a_second_axis_unasked(tmp_path):
    _store(tmp_path, [{"nodes": n, "load": ld, "seed": s} for n in (16, 64) for ld in (0.2, 0.5) for s in (1, 2)])
    with pytest.raises(ValueError, match=r"axis 'load' has 2 values .* --average-over load"):
        build_report(tmp_path, "nodes", "y", None)
    md, _ = build_report(tmp_path, "nodes", "y", None, average_over=["load"])
    text = md.read_text()
    assert "points (seed, load)" in text and "| seeds |" not in text
    md, _ = build_report(tmp_path, "nodes", "y", "load")
    assert "| seeds |" in md.read_text()


@pytest.mark.parametrize("flag", ["--group", "--x"])
def test_plot_checks_group_and_x(tmp_path, capsys, flag):
    _store(tmp_path, [{"load": ld, "seed": 1} for ld in (0.2, 0.5)])
    args = ["plot", str(tmp_path), "--y", "y", flag, "nosuchfield"] + (["--x", "load"] if flag == "--group" else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{flag} nosuchfield: not a config field" in err and len(err.strip().splitlines()) == 1


def test_plot_shows_no_interval_from_one_seed(tmp_path):
    _store(tmp_path, [{"load": ld, "seed": 1} for ld in (0.2, 0.5)])
    text = build_report(tmp_path, "load", "y", None)[0].read_text()
    assert "± 0" not in text and "| 0 |" not in text and "one sample" in text


def _frame_with_fcs(payload: bytes) -> bytes:
    return payload + zlib.crc32(payload).to_bytes(4, "little")


def _fcs_ok(frame: bytes) -> bool:
    return zlib.crc32(frame[:-4]).to_bytes(4, "little") == frame[-4:]


def test_grant_absorbed_into_a_frame_is_counted_and_fails_the_fcs():
    """README's claim, exactly: a /G/ inside a frame hit by 3 bits (sync header
    flipped and a payload bit, so it is no longer the block expected) is
    absorbed into the frame. The PCS counts the frame well-formed (frames_ok;
    the FCS is the MAC's check), its FCS fails, and the lost grant is counted
    by the control sequence (control_missed) once later blocks arrive."""
    tx, rx = codec.ControlTx(), codec.RxDemux()
    frame = _frame_with_fcs(bytes(range(100)))
    blocks = codec.encode_frame(frame)
    sync, payload = tx.grant(1, 2, 64)
    hit = (sync ^ 0b11, payload ^ (1 << 40))  # 2 sync bits + 1 payload bit
    events = []
    for b in blocks[:4] + [hit] + blocks[4:]:
        events += rx.push(b)
    delivered = [e[1] for e in events if e[0] == "frame"]
    assert rx.counters["frames_ok"] == 1 and rx.counters["control_in_data"] == 0
    assert len(delivered) == 1 and delivered[0] != frame and not _fcs_ok(delivered[0])
    for _ in range(3):
        events += rx.push(tx.grant(1, 2, 64))
    c = rx.counters
    assert c["control_missed"] >= 1 and c["grants_ok"] == 1, c
    # The same /G/ hit only in its sync header is the block expected: counted, never acted on.
    tx, rx = codec.ControlTx(), codec.RxDemux()
    sync, payload = tx.grant(1, 2, 64)
    for b in blocks[:4] + [(sync ^ 0b11, payload)] + blocks[4:]:
        rx.push(b)
    assert rx.counters["control_in_data"] == 1 and rx.counters["frames_ok"] == 1

