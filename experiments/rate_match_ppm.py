"""Rate matching at clock offsets (docs/faults.md §1): runs the RTL bench
tests/rtl/tb_rate_match.py (pcs_rate_match under Verilator) on longer lines
than `make test` does and prints, per case, the blocks sent and received and
the idles deleted and inserted.

    .venv/bin/python experiments/rate_match_ppm.py                    # 300 000-block lines, ppm cases
    .venv/bin/python experiments/rate_match_ppm.py --blocks 50000 --cases fast_1pct slow_1pct

Every case asserts what the bench asserts (no block lost, added, reordered
or split, no overflow or underflow, every block accounted for); a failing
case stops the script.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "rtl"))

from rtlsim import run_bench  # noqa: E402

PPM_CASES = ["fast_100ppm", "slow_100ppm", "fast_200ppm", "slow_200ppm"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=300_000, help="line length asked of the multiplexer")
    parser.add_argument("--cases", nargs="+", default=PPM_CASES, help="cases of tb_rate_match.CASES")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "rate_match.jsonl"
        for case in args.cases:
            run_bench("tb_rate_match", name="pcs_rate_match",
                      extra_env={"RATE_CASE": case, "RATE_BLOCKS": str(args.blocks), "RATE_RESULT": str(result)})
        rows = [json.loads(line) for line in result.read_text().splitlines()]
    print("| case | partner / local clock (ps) | offset (ppm) | blocks sent | not idle | received "
          "| idles deleted | idles inserted | overflow | underflow |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ppm = (r["out_period_ps"] / r["in_period_ps"] - 1) * 1e6
        print(f"| {r['case']} | {r['in_period_ps']} / {r['out_period_ps']} | {ppm:+.0f} | {r['sent']} "
              f"| {r['not_idle']} | {r['received']} | {r['cnt_deleted']} | {r['cnt_inserted']} "
              f"| {r['cnt_overflow']} | {r['cnt_underflow']} |")


if __name__ == "__main__":
    main()
