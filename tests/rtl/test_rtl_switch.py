"""The EDM switch datapath (rtl/switch/edm_switch.sv): lint, simulation, synthesis."""

from __future__ import annotations

import pytest

from rtlsim import run_bench


@pytest.mark.parametrize("n", [4, 8])
def test_switch(n):
    run_bench("tb_switch", {"N": n}, name=f"edm_switch_{n}")


def test_switch_with_the_registered_scheduler_tree():
    """The scheduler with its request tree registered (SCHED_REGISTERED_TREE: 4-cycle
    iterations at N = 4) in the switch: the idle latencies and the random mixed
    traffic, every byte checked and cnt_conflict == 0 (the bench asserts both)."""
    run_bench("tb_switch", {"N": 4, "SCHED_REGISTERED_TREE": 1}, name="edm_switch_4_tree",
              testcase="idle_latencies,random_traffic")


def test_ingress_classify():
    """The switch's ingress classifier and /N/ sequences against a model every cycle."""
    run_bench("tb_ingress_classify")


def test_l2_stage():
    """The switch's L2 stage against its model every cycle: learning, flooding,
    filtering, faults in frames, ingress and egress drops counted exactly."""
    run_bench("tb_l2_stage")


def test_switch_without_zero_queue_rules_counts_waiting_data():
    """The paper's rules (ZERO_QUEUE = 0): the mixed traffic makes data wait in
    the switch and cnt_conflict counts it, so the zero count under the rules
    (test_switch, the whole-fabric test) is a check that can fail."""
    run_bench("tb_switch", {"N": 4, "ZERO_QUEUE": 0},
             name="edm_switch_4_paper", testcase="random_traffic")


@pytest.mark.parametrize("idle_rule,park_age", [(1, 0), (0, 0)])
def test_switch_egress_idle_rule(idle_rule, park_age):
    """An egress booked solid (tb_switch.an_egress_booked_solid_keeps_an_idle_per_period:
    48-byte chunks, a WREQ unit of 9 blocks, 3 scheduler iterations) with the
    age rule off: the egress idle rule alone keeps an idle in every
    IDLE_PERIOD_BLOCKS blocks; without it the check fails (the bench asserts so)."""
    run_bench("tb_switch", {"N": 4, "CHUNK_BYTES": 48, "EGRESS_IDLE_RULE": idle_rule, "PARK_AGE_CYCLES": park_age},
             name=f"edm_switch_4_c48_idle{idle_rule}_age{park_age}",
             testcase="an_egress_booked_solid_keeps_an_idle_per_period")


def test_switch_without_age_rule_a_parked_port_starves():
    """PARK_AGE_CYCLES = 0: the waiting source of
    tb_switch.a_parked_port_lets_a_waiting_source_in waits past the bound the
    age rule keeps (the bench asserts so), so that check can fail."""
    run_bench("tb_switch", {"N": 4, "PARK_AGE_CYCLES": 0},
             name="edm_switch_4_age0", testcase="a_parked_port_lets_a_waiting_source_in")


def test_switch_synthesizes_for_ecp5(yosys):
    """synth_ecp5 at N = 4 with DEPTH = 8 notification slots per queue, each gate
    a LUT4 instead of ABC9's mapping (synth.py's `quick`, as for the big nodes in
    test_rtl_common.py; the full flow took 81 s in make test). The figures (full
    flow, default DEPTH = 3N, place and route) come from `edm rtl synth --design switch`."""
    from synth import synthesize

    cells = synthesize("edm_switch", {"N": 4, "DEPTH": 8}, quick=True)
    print(f"edm_switch N=4 DEPTH=8 (quick): LUT4 {cells.get('LUT4', 0)}, TRELLIS_FF {cells.get('TRELLIS_FF', 0)}, "
          f"DPR16X4 {cells.get('TRELLIS_DPR16X4', 0)}")
    assert cells.get("LUT4", 0) > 0 and cells.get("TRELLIS_FF", 0) > 0, cells
