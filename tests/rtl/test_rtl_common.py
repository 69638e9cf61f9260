"""RTL building blocks under cocotb + Verilator, and lint of every RTL file."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtlsim import MODULES, RTL, lint, run_bench, sources


@pytest.mark.parametrize("top", sorted(MODULES))
def test_lint_clean(top):
    assert lint(sources(*MODULES[top]), top) == ""


@pytest.mark.parametrize("top,param", [("edm_pim_scheduler", "REGISTERED_TREE"),
                                       ("edm_switch", "SCHED_REGISTERED_TREE")])
def test_lint_clean_with_the_registered_scheduler_tree(top, param):
    assert lint(sources(*MODULES[top]), top, {param: "1'b1"}) == ""


def test_every_rtl_file_is_linted():
    listed = {f for files in MODULES.values() for f in files} | {"common/edm_pkg.sv"}
    on_disk = {str(p.relative_to(RTL)) for p in RTL.rglob("*.sv")}
    assert on_disk == listed, f"add new RTL files to MODULES: {sorted(on_disk - listed)}"


@pytest.mark.parametrize("depth_log2,reg_head", [(1, 0), (3, 0), (1, 1), (3, 1)])
def test_fifo(depth_log2, reg_head):
    run_bench("tb_fifo", {"DEPTH_LOG2": depth_log2, "REG_HEAD": reg_head},
             name=f"edm_fifo_{depth_log2}_{reg_head}")


@pytest.mark.parametrize("descramble", [0, 1])
def test_scrambler(descramble):
    run_bench("tb_scrambler", {"DESCRAMBLE": descramble}, name=f"pcs_scrambler_{descramble}")


@pytest.mark.parametrize("top", ["pcs_encoder", "pcs_decoder"])
def test_pcs_codec(top):
    run_bench(f"tb_{top}")


@pytest.mark.parametrize("depth_log2", [2, 3])
def test_fifo_async(depth_log2):
    run_bench("tb_fifo_async", {"DEPTH_LOG2": depth_log2}, name=f"edm_fifo_async_{depth_log2}")


def test_block_lock():
    run_bench("tb_block_lock")


@pytest.mark.parametrize("strict", [0, 1])
def test_edm_tx(strict):
    run_bench("tb_edm_tx", {"STRICT": strict}, name=f"edm_tx_{strict}")


def test_crc32c_unit():
    run_bench("tb_crc32c_unit")


def test_edm_rx():
    run_bench("tb_edm_rx")


def test_ack_sender():
    """A memory node's /A/ sender: every write acknowledged once, paced, aggregated."""
    run_bench("tb_ack_sender")


def test_write_outcome():
    """A compute node's write outcomes: one per write, acknowledged or failed."""
    run_bench("tb_write_outcome")


@pytest.mark.parametrize("mirror", [0, 1])
def test_write_retry(mirror):
    """A compute node's write retry: re-sent with its id until acknowledged, the
    activation rules; as edm_mirror's (1): a re-send's tag of its entry, and a
    re-send only once every plane's copy of the last send is finished."""
    params = {"RESEND_TAG_BASE": 32, "WAIT_FREE": 1} if mirror else {}
    run_bench("tb_write_retry", params, name=f"edm_write_retry_{mirror}")


@pytest.mark.parametrize("acks", [1, 0])
def test_write_front(acks):
    """A compute host's front for acknowledged writes: retry and outcome wired
    (one outcome per write, a lost one re-sent), or a wire without ACKS."""
    run_bench("tb_write_front", {"ACKS": acks}, name=f"edm_write_front_{acks}")


def test_unit_receiver():
    run_bench("tb_unit_receiver")


def test_mem_node():
    run_bench("tb_mem_node")


def test_mem_node_acknowledges_writes():
    """ACKS = 1 (docs/protocol.md §4b): the random mix and the second copies
    with every write acknowledged once by an /A/ between the RRES units."""
    for case in ("random_mix", "second_copies"):
        run_bench("tb_mem_node", {"ACKS": 1}, name="edm_mem_node_acks", testcase=case)


def test_mem_translate():
    run_bench("tb_mem_translate")


def translation_cycles(tmp) -> dict:
    """One 64 B read alone through the plain memory node and the translating
    one (tb_mem_node_xl.translation_latency): cycles from its last block to its
    first data read and first response block; TLB miss and hit."""
    import json  # noqa: PLC0415

    out = {}
    for top in ("edm_mem_node", "edm_mem_node_xl"):
        path = Path(tmp) / f"{top}.json"
        run_bench("tb_mem_node_xl", toplevel=top, extra_env={"EDM_XL_LATENCY_JSON": str(path)},
                  testcase="translation_latency")
        out.update(json.loads(path.read_text()))
    return out


def test_mem_node_xl():
    run_bench("tb_mem_node_xl")


def test_translation_adds_no_cycle_on_a_tlb_hit(tmp_path):
    """The same read through the plain node and the translating one: a TLB hit
    costs nothing, a miss exactly its walk (docs/hardware.md)."""
    cycles = translation_cycles(tmp_path)
    assert cycles["hit"] == cycles["plain"], cycles
    walk = cycles["walk_reads"] + cycles["dram_latency"] + 1
    assert cycles["miss"]["to_first_dram_read"] == cycles["plain"]["to_first_dram_read"] + walk, cycles


def test_compute_node_with_mem_nodes():
    # One compute node and two memory nodes (tests/rtl/tb_compute_mem_top.sv)
    # with a Python switch model between them.
    run_bench("tb_compute_node")


# One destination's queue (N pairs of X slots) against a Python model, operation by
# operation; the STAMP_W = 4 cases run the arrival stamps around their wrap many times.
# REGISTERED_TREE = 1 (at N = 4 the tree is its root alone, so the request is as
# timed without it): inserts per pair from two writers, pair_room a register.
@pytest.mark.parametrize("srpt,pair_order,x,depth,stamp_w,tree",
                         [(1, 1, 3, 12, 16, 0), (0, 1, 2, 6, 16, 0), (1, 0, 3, 8, 16, 0), (1, 0, 2, 8, 4, 0),
                          (0, 0, 3, 10, 4, 0), (1, 0, 3, 8, 16, 1), (0, 1, 2, 6, 16, 1)])
def test_notif_queue(srpt, pair_order, x, depth, stamp_w, tree):
    run_bench("tb_notif_queue",
              {"N": 4, "X": x, "DEPTH": depth, "SRPT": srpt, "PAIR_ORDER": pair_order, "STAMP_W": stamp_w,
               "REGISTERED_TREE": tree},
              name=f"edm_notif_queue_{srpt}{pair_order}_{x}_{depth}_{stamp_w}{'_tree' if tree else ''}")


# The paper's ordered list (one destination's queue as §3.1.2 builds it) against a Python
# sorted list, every cycle: a small list, and DEPTH = X·N for N = 4 and 16 (X = 3) with the
# widths `edm rtl synth --design ordered-list` builds (16-bit key; source port, message id, kind).
@pytest.mark.parametrize("depth,key_w,data_w,id_w", [(4, 10, 8, 7), (12, 16, 11, 10), (48, 16, 13, 12)])
def test_ordered_list(depth, key_w, data_w, id_w):
    run_bench("tb_ordered_list", {"DEPTH": depth, "KEY_W": key_w, "DATA_W": data_w, "ID_W": id_w},
             name=f"edm_ordered_list_{depth}", extra_env={"EDM_OL_ID_W": str(id_w)})


# N, policy, line rate (block ps), chunk bytes, queue depth: each against edm.sim.Scheduler,
# under the paper's rules and under EDM's (no pair order, pipelined matching, hold k = 2),
# X = 3 slots per source-destination pair. N = 32 is slow (minutes each): -m slow.
PIM_CASES = {(4, 1): (640, 256, 8), (4, 0): (2560, 64, 8), (8, 1): (640, 128, 12), (8, 0): (6400, 256, 16),
             (16, 1): (640, 256, 8), (16, 0): (2560, 128, 6), (32, 1): (640, 256, 24), (32, 0): (2560, 128, 12)}


@pytest.mark.parametrize("rules", ["paper", "edm"])
@pytest.mark.parametrize("n", [4, 8, 16, pytest.param(32, marks=pytest.mark.slow)])
@pytest.mark.parametrize("srpt", [1, 0])
def test_pim_scheduler(n, srpt, rules):
    block_ps, chunk, depth = PIM_CASES[(n, srpt)]
    edm = rules == "edm"
    params = {"N": n, "SRPT": srpt, "BLOCK_PS": block_ps, "CHUNK_BYTES": chunk, "DEPTH": depth, "X": 3,
              "PAIR_ORDER": int(not edm), "PIPELINED": int(edm), "HOLD": 2 if edm and srpt else 0}
    run_bench("tb_pim_scheduler", params,
             name=f"edm_pim_scheduler_{n}_{'srpt' if srpt else 'fcfs'}_{rules}")


# The registered request tree (REGISTERED_TREE = 1: a tree level per cycle, the accept
# in two stages; iterations of sw_pim_iter_cycles(N, True) cycles) against the model
# with scheduler_registered_tree: both policies and both rule sets across N = 4 and 8,
# one case at N = 16 (its build alone takes minutes).
@pytest.mark.parametrize("n,srpt,rules", [(4, 1, "paper"), (4, 0, "edm"), (8, 1, "edm"), (8, 0, "paper"),
                                          (16, 1, "edm")])
def test_pim_scheduler_registered_tree(n, srpt, rules):
    block_ps, chunk, depth = PIM_CASES[(n, srpt)]
    edm = rules == "edm"
    params = {"N": n, "SRPT": srpt, "BLOCK_PS": block_ps, "CHUNK_BYTES": chunk, "DEPTH": depth, "X": 3,
              "PAIR_ORDER": int(not edm), "PIPELINED": int(edm), "HOLD": 2 if edm and srpt else 0,
              "REGISTERED_TREE": 1}
    run_bench("tb_pim_scheduler", params,
             name=f"edm_pim_scheduler_{n}_{'srpt' if srpt else 'fcfs'}_{rules}_tree")


@pytest.mark.parametrize("srpt", [1, 0])
def test_pim_scheduler_stamps_wrap_around(srpt):
    """6-bit arrival stamps: the counter wraps every 64 notifications, the
    bench keeps every live entry within 32 of the newest (the stamps' exact
    range), and the grants still match the model's unbounded arrival order."""
    block_ps, chunk, depth = PIM_CASES[(4, srpt)]
    run_bench("tb_pim_scheduler",
              {"N": 4, "SRPT": srpt, "BLOCK_PS": block_ps, "CHUNK_BYTES": chunk, "DEPTH": depth, "X": 3,
               "PAIR_ORDER": 0, "STAMP_W": 6},
              name=f"edm_pim_scheduler_4_{srpt}_stamp6", testcase="stamps_wrap_around")


def test_pim_scheduler_registered_tree_stamps_wrap_around():
    """The registered tree's stamps ({inserting cycles, lane}: 6 + 2 bits) wrap too."""
    block_ps, chunk, depth = PIM_CASES[(4, 1)]
    run_bench("tb_pim_scheduler",
              {"N": 4, "SRPT": 1, "BLOCK_PS": block_ps, "CHUNK_BYTES": chunk, "DEPTH": depth, "X": 3,
               "PAIR_ORDER": 0, "STAMP_W": 6, "REGISTERED_TREE": 1},
              name="edm_pim_scheduler_4_1_stamp6_tree", testcase="stamps_wrap_around")


def test_pim_scheduler_parks_destinations():
    """PARK_DST, the switch's zero-queue rules (no reference model has them):
    the directed test alone (the paper's builds above run it to check that
    the inputs are ignored)."""
    run_bench("tb_pim_scheduler", {"N": 4, "PARK_DST": 1}, name="edm_pim_scheduler_4_park", testcase="parked_destinations")


# The big nodes, whose full LUT mapping took 1-3 min each in CI, and edm_rx (ABC9
# took two thirds of its 32 s of CPU): make test maps them a gate per LUT4
# (synth.py's QUICK_LUTS).
QUICK_SYNTH = {"edm_mem_node", "edm_compute_node", "edm_dup_filter", "edm_rx"}
# edm_dup_filter's 64-id window per source took 296 s even quick: make test builds
# the same logic with a 16-id window (its parameter), the default size is in
# `.venv/bin/python tests/rtl/synth.py`'s table.
MAKE_TEST_PARAMS = {"edm_dup_filter": {"WINDOW_LOG2": 4, "NEW_MAX": 16}}


# The switch at its default size takes ~5 min to synthesize: test_rtl_switch.py
# synthesizes a smaller one. edm_mem_node_xl only wires edm_mem_translate to
# edm_mem_node, both synthesized here; alone it did not finish in 19 min on 2 busy cores
# (`.venv/bin/python tests/rtl/synth.py` includes it). The L2 stage's stores and
# queues (1.6 Mbit, read asynchronously) are not synthesized yet (docs/hardware.md),
# nor edm_eth_switch, which holds it and the switch. edm_write_outcome keeps its
# slots in flip-flops: even at 2 x 16 slots Yosys takes minutes (docs/hardware.md);
# edm_write_front holds it and edm_write_retry (synthesized alone) and adds only wires.
@pytest.mark.parametrize("top", sorted(set(MODULES) - {"edm_switch", "edm_mem_node_xl", "edm_l2_stage",
                                                      "edm_eth_switch", "edm_write_outcome", "edm_write_front"}))
@pytest.mark.usefixtures("yosys")  # tests/conftest.py: YoWASP's cache warmed once
def test_synthesizes_for_ecp5(top):
    """Every module synthesizes for the ECP5: the full synth_ecp5, or for the
    big nodes (QUICK_SYNTH) every step of it but ABC9's LUT mapping, each gate
    a LUT4 instead, no generic cell left (synth.py's QUICK_LUTS)."""
    from synth import PARAMS, synthesize

    params = {**PARAMS.get(top, {}), **MAKE_TEST_PARAMS.get(top, {})}
    cells = synthesize(top, params, quick=top in QUICK_SYNTH)
    combinational = top in {"edm_crc32c_unit"}  # no registers: its users hold the state
    assert cells.get("LUT4", 0) > 0 and (cells.get("TRELLIS_FF", 0) > 0) != combinational, cells


def run_host_path(frames: int = 300, load: float = 0.6, json_out=None):
    """Real frames (scapy, cocotbext-eth) through a host's transmit path and
    its partner's receive path while memory units preempt them (tb_host_path.py)."""
    env = {"EDM_HOST_PATH_FRAMES": str(frames), "EDM_HOST_PATH_LOAD": str(load)}
    if json_out:
        env["EDM_HOST_PATH_JSON"] = str(json_out)
    run_bench("tb_host_path", extra_env=env)


def test_host_path_with_independent_ethernet_models(tmp_path):
    out = tmp_path / "host_path.json"
    run_host_path(json_out=out)
    import json  # noqa: PLC0415

    data = json.loads(out.read_text())
    assert data["frames_with_memory"]["frames"] == 300 and data["frames_with_memory"]["memory_units"] > 1000
