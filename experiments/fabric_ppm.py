"""Clock offsets end to end (docs/faults.md §1): the whole RTL fabric
(tests/rtl/tb_fabric_top.sv built with RATE_MATCH = 1) with every host's and
the switch's clocks offset, random memory traffic and frames on every link,
every byte checked (tests/rtl/tb_fabric.py, clock_offsets); prints, per link
direction, the blocks each side's clock made and the idles the receiver's
elastic buffer deleted and inserted.

    .venv/bin/python experiments/fabric_ppm.py                        # ±100 / ±200 ppm, 400 rounds
    .venv/bin/python experiments/fabric_ppm.py --rounds 60 --cases="10000,-10000,5000,-5000,0;-5000,5000,-10000,10000,0"

A case's offsets are in ppm, one per host (compute nodes, then memory nodes)
and the switch last; cases are separated by ";". Every case asserts what the bench asserts (requests and
frames byte-exact, no overflow, underflow or starved run, idles deleted minus
inserted equal to the clocks' difference within a buffer); a failing case
stops the script.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "rtl"))

from test_rtl_fabric import FAULTS_BUILD, run_fabric  # noqa: E402

# Every host-switch link sees +-100 and +-200 ppm, in both directions, once
# with the compute nodes at 200 ppm and once with the memory nodes.
CASES = "200,-200,100,-100,0;-100,100,-200,200,0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400, help="rounds of the traffic test (one request per compute node each)")
    parser.add_argument("--cases", default=CASES, help="offsets in ppm, hosts then the switch; cases split by ;")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, case in enumerate(args.cases.split(";")):
            out = Path(tmp) / f"case{k}.json"
            start = time.time()
            run_fabric(**FAULTS_BUILD, testcase="clock_offsets",
                       env={"EDM_FABRIC_PPM": case, "EDM_FABRIC_ROUNDS": str(args.rounds),
                            "EDM_FABRIC_PPM_JSON": str(out)})
            if not out.exists():
                sys.exit(f"case {case}: the bench failed (see tests/rtl/sim_build/*_rm_*/results.xml)")
            rows.append((case, json.loads(out.read_text()), time.time() - start))
    print("| clocks (ppm) | cycles | requests / bytes checked | frames | link | sender / receiver (ppm) "
          "| sender blocks | receiver blocks | idles deleted | inserted | overflow | underflow | starved |")
    print("|---|---:|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for case, r, _ in rows:
        for link in r["links"]:
            print(f"| {case} | {r['cycles']} | {r['requests']} / {r['bytes_checked']} | {r['frames']} "
                  f"| {link['way']} {link['port']} | {link['sender_ppm']:+d} / {link['receiver_ppm']:+d} "
                  f"| {link['sender_blocks']} | {link['receiver_blocks']} | {link['deleted']} | {link['inserted']} "
                  f"| {link['overflow']} | {link['underflow']} | {link['starved']} |")
    for case, r, wall in rows:
        print(f"{case}: {r['cycles']} cycles, idle pacer held memory {r['paced']} cycles per host, {wall:.0f} s")


if __name__ == "__main__":
    main()
