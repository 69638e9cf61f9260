"""Real Ethernet frames through a host's transmit path and its partner's
receive path while memory units preempt them (docs/hardware.md, "Real
frames, independent models"): cocotbext-eth's XGMII source and sink, scapy's
packets, tests/rtl/tb_host_path.py on tests/rtl/tb_host_path_top.sv. Every
frame is checked byte for byte with its FCS, every memory unit intact; prints
the JSON of both runs (frames alone, frames with memory), with the frame
latency in cycles of the 2.56 ns PCS clock.

    .venv/bin/python experiments/host_path_frames.py                    # 1000 frames, load 0.6
    .venv/bin/python experiments/host_path_frames.py --frames 300 --load 0.8 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "rtl"))

from test_rtl_common import run_host_path  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1000, help="frames in the run with memory (a fifth alone)")
    parser.add_argument("--load", type=float, default=0.6, help="memory units offered, link blocks per cycle")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not 0 < args.load < 1 or args.frames < 10:
        parser.error("--load must be in (0, 1) and --frames at least 10")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "host_path.json"
        run_host_path(args.frames, args.load, out)
        data = json.loads(out.read_text())
    text = json.dumps(data, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
