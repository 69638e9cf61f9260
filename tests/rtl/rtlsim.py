"""Shared helpers for the RTL tests: source lists, the bench registry, the
cocotb runner (seed, waveforms, replay line), lint.

Every cocotb bench (tests/rtl/tb_*.py) is in BENCHES with the top it runs on;
run_bench() is the one way to run one, from the pytest files and from
`edm rtl test` (python/edm/rtl/bench.py) alike."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shlex
import shutil
import warnings
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RTL = ROOT / "rtl"
TESTS = Path(__file__).resolve().parent
PACKAGE = RTL / "common" / "edm_pkg.sv"
WAVES = TESTS / "waves"   # GTKWave save files (signals grouped by stage)

# The RTL files (under rtl/, after edm_pkg.sv) of each module that is a top of its own.
MODULES = {
    "edm_fifo": ["common/edm_fifo.sv"],
    "edm_fifo_async": ["common/edm_fifo_async.sv"],
    "pcs_scrambler": ["pcs/pcs_scrambler.sv"],
    "edm_tx": ["common/edm_fifo.sv", "host/edm_tx.sv"],
    "edm_crc32c_unit": ["common/edm_crc32c_unit.sv"],
    "edm_rx": ["common/edm_crc32c_unit.sv", "host/edm_rx.sv"],
    "pcs_block_lock": ["pcs/pcs_block_lock.sv"],
    "pcs_rate_match": ["common/edm_fifo_async.sv", "pcs/pcs_rate_match.sv"],
    "pcs_ber_monitor": ["pcs/pcs_ber_monitor.sv"],
    "pcs_link_guard": ["pcs/pcs_ber_monitor.sv", "pcs/pcs_link_guard.sv"],
    "pcs_link_fault": ["pcs/pcs_link_fault.sv"],
    "edm_idle_pacer": ["common/edm_idle_pacer.sv"],
    "pcs_encoder": ["pcs/pcs_codec_pkg.sv", "pcs/pcs_encoder.sv"],
    "pcs_decoder": ["pcs/pcs_codec_pkg.sv", "pcs/pcs_decoder.sv"],
    "edm_notif_queue": ["switch/edm_notif_queue.sv"],
    "edm_pim_scheduler": ["common/edm_fifo.sv", "switch/edm_notif_queue.sv", "switch/edm_pim_scheduler.sv"],
    "edm_circuit_timeout": ["switch/edm_circuit_timeout.sv"],
    "edm_ordered_list": ["switch/edm_ordered_list.sv"],
    "edm_switch": ["common/edm_fifo.sv", "switch/edm_notif_queue.sv", "switch/edm_pim_scheduler.sv",
                   "switch/edm_circuit_timeout.sv", "switch/edm_ingress_classify.sv", "switch/edm_switch.sv"],
    "edm_l2_stage": ["common/edm_fifo.sv", "switch/edm_l2_stage.sv"],
    "edm_ingress_classify": ["switch/edm_ingress_classify.sv"],
    "edm_switch_egress": ["common/edm_fifo.sv", "host/edm_tx.sv", "switch/edm_switch_egress.sv"],
    "edm_eth_switch": ["common/edm_fifo.sv", "host/edm_tx.sv", "switch/edm_notif_queue.sv",
                       "switch/edm_pim_scheduler.sv", "switch/edm_circuit_timeout.sv", "switch/edm_ingress_classify.sv", "switch/edm_switch.sv",
                       "switch/edm_l2_stage.sv", "switch/edm_switch_egress.sv", "switch/edm_eth_switch.sv"],
    "edm_unit_emitter": ["common/edm_crc32c_unit.sv", "common/edm_unit_emitter.sv"],
    "edm_unit_receiver": ["common/edm_unit_receiver.sv"],
    "edm_dup_filter": ["common/edm_unit_receiver.sv", "host/edm_dup_filter.sv"],
    "edm_mirror": ["common/edm_fifo.sv", "host/edm_mirror.sv"],
    "edm_ack_sender": ["common/edm_fifo.sv", "host/edm_ack_sender.sv"],
    "edm_write_outcome": ["common/edm_fifo.sv", "host/edm_write_outcome.sv"],
    "edm_write_retry": ["host/edm_write_retry.sv"],
    "edm_write_front": ["common/edm_fifo.sv", "host/edm_write_outcome.sv", "host/edm_write_retry.sv",
                        "host/edm_write_front.sv"],
    "edm_mem_node": ["common/edm_fifo.sv", "common/edm_crc32c_unit.sv", "common/edm_unit_emitter.sv",
                     "common/edm_unit_receiver.sv", "host/edm_ack_sender.sv", "host/edm_mem_node.sv"],
    "edm_mem_translate": ["common/edm_fifo.sv", "host/edm_mem_translate.sv"],
    "edm_mem_node_xl": ["common/edm_fifo.sv", "common/edm_crc32c_unit.sv", "common/edm_unit_emitter.sv",
                        "common/edm_unit_receiver.sv", "host/edm_mem_translate.sv", "host/edm_ack_sender.sv", "host/edm_mem_node.sv", "host/edm_mem_node_xl.sv"],
    "edm_compute_node": ["common/edm_fifo.sv", "common/edm_fifo_async.sv", "common/edm_crc32c_unit.sv",
                         "common/edm_unit_emitter.sv", "common/edm_unit_receiver.sv", "host/edm_compute_node.sv"],
}

# The whole fabric (tests/rtl/tb_fabric_top.sv) without its top.
FABRIC = ["common/edm_fifo.sv", "common/edm_fifo_async.sv", "common/edm_crc32c_unit.sv", "common/edm_unit_emitter.sv",
          "common/edm_unit_receiver.sv", "common/edm_idle_pacer.sv", "pcs/pcs_scrambler.sv", "pcs/pcs_rate_match.sv",
          "pcs/pcs_ber_monitor.sv", "pcs/pcs_link_guard.sv", "pcs/pcs_codec_pkg.sv", "pcs/pcs_encoder.sv", "pcs/pcs_decoder.sv",
          "pcs/pcs_link_fault.sv", "host/edm_tx.sv", "host/edm_rx.sv",
          "host/edm_compute_node.sv", "host/edm_write_outcome.sv", "host/edm_write_retry.sv", "host/edm_write_front.sv",
          "host/edm_dup_filter.sv",
          "host/edm_ack_sender.sv", "host/edm_mem_node.sv",
          "switch/edm_notif_queue.sv",
          "switch/edm_pim_scheduler.sv", "switch/edm_circuit_timeout.sv", "switch/edm_ingress_classify.sv", "switch/edm_switch.sv",
          "switch/edm_l2_stage.sv", "switch/edm_switch_egress.sv", "switch/edm_eth_switch.sv"]

# A host's transmit path to its partner's receive path (tests/rtl/tb_host_path_top.sv).
HOST_PATH = ["common/edm_fifo.sv", "common/edm_crc32c_unit.sv", "pcs/pcs_codec_pkg.sv", "pcs/pcs_encoder.sv",
             "pcs/pcs_decoder.sv", "pcs/pcs_scrambler.sv", "pcs/pcs_link_fault.sv", "host/edm_tx.sv", "host/edm_rx.sv"]


def sources(*relative: str) -> list[Path]:
    """The package first, then the named files under rtl/."""
    return [PACKAGE] + [RTL / r for r in relative]


@dataclass(frozen=True)
class Bench:
    """A cocotb bench: its top, the top's files (rtl/ paths; a name starting
    with tb_ is a test file under tests/rtl), the parameters every run of it sets,
    and the GTKWave save file for its waveform (tests/rtl/waves/)."""
    toplevel: str
    files: tuple[str, ...]
    parameters: dict = field(default_factory=dict)
    gtkw: str | None = None

    def sources(self) -> list[Path]:
        return [PACKAGE] + [TESTS / f if f.startswith("tb_") else RTL / f for f in self.files]


def _module(top: str, parameters: dict | None = None, gtkw: str | None = None) -> Bench:
    return Bench(top, tuple(MODULES[top]), parameters or {}, gtkw)


BENCHES: dict[str, Bench] = {
    "tb_fifo": _module("edm_fifo", {"WIDTH": 66}),
    "tb_fifo_async": _module("edm_fifo_async", {"WIDTH": 66}),
    "tb_scrambler": _module("pcs_scrambler"),
    "tb_pcs_encoder": _module("pcs_encoder"),
    "tb_pcs_decoder": _module("pcs_decoder"),
    "tb_block_lock": _module("pcs_block_lock"),
    "tb_edm_tx": _module("edm_tx"),
    "tb_crc32c_unit": _module("edm_crc32c_unit"),
    "tb_edm_rx": _module("edm_rx"),
    "tb_unit_receiver": _module("edm_unit_receiver"),
    "tb_mem_node": _module("edm_mem_node", gtkw="mem_node.gtkw"),
    "tb_mem_translate": _module("edm_mem_translate", {"PT_BASE": 0x4_0000, "PT_BUCKETS_LOG2": 4, "PT_WAYS": 4}),
    # The bench's page table sits in the node's last page (tb_mem_node_xl.PT_BASE).
    "tb_mem_node_xl": _module("edm_mem_node_xl", {"PT_BASE": "64'h0123456789ABF000", "PT_BUCKETS_LOG2": 4,
                                                  "PT_WAYS": 4}),
    # One compute node and two memory nodes with a Python switch model between them.
    "tb_compute_node": Bench("tb_compute_mem_top", (*MODULES["edm_compute_node"], "host/edm_ack_sender.sv", "host/edm_mem_node.sv",
                                                    "tb_compute_mem_top.sv")),
    "tb_notif_queue": _module("edm_notif_queue", {"N": 4, "DEPTH": 6}),
    "tb_ordered_list": _module("edm_ordered_list"),
    "tb_pim_scheduler": _module("edm_pim_scheduler"),
    "tb_switch": _module("edm_switch", {"CHUNK_BYTES": 64}, gtkw="switch.gtkw"),
    # Small stores, queues and table, so that a short run fills and replaces them.
    "tb_ingress_classify": _module("edm_ingress_classify"),
    "tb_l2_stage": _module("edm_l2_stage", {"N": 4, "TABLE_SIZE": 4, "IB_LOG2": 8, "FD_LOG2": 3, "EQ_LOG2": 9}),
    "tb_rate_match": _module("pcs_rate_match"),
    "tb_idle_pacer": Bench("tb_paced_tx_top", (*MODULES["edm_tx"], *MODULES["edm_idle_pacer"], "tb_paced_tx_top.sv")),
    "tb_ber_monitor": _module("pcs_ber_monitor"),
    "tb_link_guard": _module("pcs_link_guard", {"WINDOW_CYCLES": 64, "THRESHOLD": 4}),
    "tb_circuit_timeout": _module("edm_circuit_timeout"),
    "tb_dup_filter": _module("edm_dup_filter", {"SRC_LOG2": 2, "WINDOW_LOG2": 4, "SEQ_LOG2": 2}),
    "tb_mirror": _module("edm_mirror", {"WAIT_CYCLES": 40, "DEAD_CYCLES": 1000}),
    "tb_ack_sender": _module("edm_ack_sender"),
    "tb_write_outcome": _module("edm_write_outcome"),
    "tb_write_retry": _module("edm_write_retry"),
    "tb_write_front": _module("edm_write_front"),
    "tb_link_fault": _module("pcs_link_fault"),
    # A host's transmit path and its partner's receive path, real frames from cocotbext-eth.
    "tb_host_path": Bench("tb_host_path_top", (*HOST_PATH, "tb_scrambled_link.sv", "tb_host_path_top.sv")),
    "tb_fabric": Bench("tb_fabric_top", (*FABRIC, "tb_scrambled_link.sv", "tb_fabric_top.sv"), gtkw="fabric.gtkw"),
    # The same fabric, every host's MAC side an XGMII for cocotbext-eth (tb_fabric_interop.py).
    "tb_fabric_interop": Bench("tb_fabric_top", (*FABRIC, "tb_scrambled_link.sv", "tb_fabric_top.sv"),
                               {"XGMII_MACS": 1}, gtkw="fabric.gtkw"),
    "tb_ycsb": Bench("tb_fabric_top", (*FABRIC, "tb_scrambled_link.sv", "tb_fabric_top.sv"), gtkw="fabric.gtkw"),
    "tb_dual_fabric": Bench("tb_dual_fabric_top", (*FABRIC, "host/edm_mirror.sv",
                                                   "tb_scrambled_link.sv", "tb_fabric_top.sv",
                                                   "tb_dual_fabric_top.sv")),
}


def seed_from_env() -> int:
    """The seed of the random benches: $EDM_SEED, 0 when unset (tbutil.seed reads the same)."""
    return int(os.environ.get("EDM_SEED") or 0)


def waves_from_env() -> bool:
    """$EDM_WAVES=1: build with FST tracing and dump a waveform."""
    return os.environ.get("EDM_WAVES", "") not in ("", "0")


def run_bench(testbench: str, parameters: dict | None = None, *, name: str | None = None,
              extra_env: dict | None = None, testcase: str | None = None, toplevel: str | None = None,
              seed: int | None = None, waves: bool | None = None) -> list[str]:
    """Builds bench `testbench`'s top (or `toplevel`, a module of MODULES) with
    its parameters and `parameters`, and runs it; returns the failed test
    cases. `name` is the model's build folder (tests/rtl/sim_build/NAME;
    runs of one name share the model). `seed` (else $EDM_SEED, else 0) seeds
    every random stream (tbutil.seeded_random); `waves` (else $EDM_WAVES) dumps an FST.
    Under pytest a failing cocotb test fails the calling test."""
    bench = BENCHES[testbench]
    if toplevel not in (None, bench.toplevel):
        bench = _module(toplevel, gtkw=bench.gtkw)
    params = {**bench.parameters, **(parameters or {})}
    return simulate(bench.toplevel, bench.sources(), testbench, params, name=name, extra_env=extra_env,
                    testcase=testcase, seed=seed, waves=waves, gtkw=bench.gtkw)


def replay_command(testbench: str, *, testcase: str | None, seed: int, parameters: dict, extra_env: dict) -> str:
    """The one command that runs this bench again as it just ran."""
    env = [f"{k}={shlex.quote(str(v))}" for k, v in sorted(extra_env.items())]
    args = ["edm", "rtl", "test", testbench]
    if testcase:
        args += ["--case", testcase]
    args += ["--seed", str(seed)]
    for k, v in parameters.items():
        args += ["--param", f"{k}={v}"]
    return " ".join(env + [shlex.quote(a) for a in args])


def failed_cases(results_xml: Path) -> list[str]:
    """The test cases a cocotb results file marks failed (all of them when there is no file)."""
    if not results_xml.is_file():
        return ["(no results: the simulation ended abnormally)"]
    return [case.get("name", "?") for case in ET.parse(results_xml).iter("testcase")
            if case.find("failure") is not None or case.find("error") is not None]


def simulate(toplevel: str, files: list[Path], testbench: str, parameters: dict | None = None, name: str | None = None,
             extra_env: dict | None = None, testcase: str | None = None, seed: int | None = None,
             waves: bool | None = None, gtkw: str | None = None) -> list[str]:
    """Builds `toplevel` with Verilator and runs the cocotb module `testbench`
    (run_bench's runner). Prints the seed first and, when a case fails, the
    command that replays it; with waves, the FST's path. Returns the failed
    cases; under pytest a failing cocotb test fails the calling test."""
    __tracebackhide__ = True  # pytest: the failure and its replay line, not this function
    with warnings.catch_warnings():  # "experimental" notice of cocotb 1.9's runner
        warnings.simplefilter("ignore")
        from cocotb.runner import get_runner

    seed = seed_from_env() if seed is None else seed
    waves = waves_from_env() if waves is None else waves
    parameters = parameters or {}
    extra_env = extra_env or {}
    # A traced model lives apart, so a traced and an untraced build of one top never overwrite each other.
    build_dir = TESTS / ("sim_build_waves" if waves else "sim_build") / (name or toplevel)
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    fst = build_dir / f"{testbench}.fst"
    print(f"rtl bench {testbench} on {toplevel}: seed {seed} (EDM_SEED)", flush=True)
    runner = get_runner("verilator")
    runner.env.update(compiler_cache())  # build() lays the process environment over these
    # Tests that share a model (same name) run it side by side under pytest -n,
    # and no build rewrites a model while a test runs it: a build holds the
    # model's lock alone (the first builds, the next finds it current:
    # Verilator skips identical inputs), a run under pytest holds it shared
    # with other runs (a traced run alone: its waveform file is the bench's).
    build_args = (["-Wno-fatal", "-O2"] + (["--trace-fst", "--trace-structs"] if waves else [])
                  # cocotb 1.9's runner adds --trace (VCD) for waves; --trace-fst after it makes the trace FST.
                  # The sources go in as paths relative to the build folder (build_args, which the
                  # runner passes as they are; verilog_sources it makes absolute): Verilator writes
                  # the paths into the model's C++, which is then the same in every checkout and
                  # compiles once per machine (compiler_cache).
                  + [os.path.relpath(f, build_dir) for f in files])
    with open(build_dir.with_name(build_dir.name + ".lock"), "w") as lock:
        # Side by side only under pytest, where each run's results file is its test's.
        build_model(runner, lock, toplevel, parameters, build_dir, build_args, files, waves,
                    shared=not waves and "PYTEST_CURRENT_TEST" in os.environ)
        failure = None
        try:
            runner.test(
                hdl_toplevel=toplevel,
                hdl_toplevel_lang="verilog",  # the runner cannot tell: the sources went in as build_args
                test_module=testbench,
                build_dir=build_dir,
                test_dir=build_dir,  # results land here; tb_* import via sys.path (conftest.py)
                extra_env={**extra_env, "EDM_SEED": str(seed), "RANDOM_SEED": str(seed)},
                testcase=testcase,
                waves=waves,
                test_args=["--trace-file", str(fst)] if waves else [],
            )
        except SystemExit as e:  # under pytest cocotb's runner raises on a failed case
            failure = e
        # Where test() had cocotb write its results (under pytest it names the file after the test).
        failed = failed_cases(Path(runner.env.get("COCOTB_RESULTS_FILE", build_dir / "results.xml")))
    if waves:
        view = f"gtkwave {fst} {WAVES / gtkw}" if gtkw else f"gtkwave {fst}"
        print(f"waveform: {fst}  (open: {view}; or: surfer {fst})", flush=True)
    if failed:
        cases = ",".join(c for c in failed if not c.startswith("(")) or testcase
        replay = replay_command(testbench, testcase=cases, seed=seed, parameters=parameters, extra_env=extra_env)
        print(f"failed: {', '.join(failed)}\nreplay: {replay}", flush=True)
        if failure is not None:
            raise SystemExit(f"{failure}\nreplay: {replay}") from None
    if failure is not None:
        raise failure
    return failed


def build_model(runner, lock, toplevel: str, parameters: dict, build_dir: Path, build_args: list[str],
                files: list[Path], waves: bool, shared: bool = True) -> None:
    """Returns holding `lock` shared (`shared`; else alone) with the model of
    these inputs built in `build_dir`. A model whose key (its inputs and the
    sources' bytes, written by its build) is these inputs' is run as it is;
    else it is built holding the lock alone. flock's switch from exclusive to
    shared is not atomic: a build of another model under the same name may
    slip in between, so the key is checked again under the shared lock."""
    import cocotb  # noqa: PLC0415 (loaded by the runner already)

    sources = hashlib.sha256(b"".join(Path(f).read_bytes() for f in files)).hexdigest()
    verilator = shutil.which("verilator") or ""
    key = repr((toplevel, sorted((k, str(v)) for k, v in parameters.items()), build_args, waves, sources,
                cocotb.__version__, verilator, verilator and os.stat(verilator).st_mtime_ns))
    stamp = build_dir / "edm_model_key"
    if shared:
        fcntl.flock(lock, fcntl.LOCK_SH)
        if stamp.is_file() and stamp.read_text() == key and (build_dir / toplevel).is_file():
            return
    while True:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp.unlink(missing_ok=True)  # a build that fails half way leaves no key behind
        runner.build(hdl_toplevel=toplevel, parameters=parameters, build_dir=build_dir, build_args=build_args,
                     waves=waves)
        stamp.write_text(key)
        if not shared:
            return
        fcntl.flock(lock, fcntl.LOCK_SH)
        if stamp.read_text() == key:
            return


def compiler_cache() -> dict[str, str]:
    """Environment for ccache, when installed. The cache is the user's (ccache's
    own default, or $CCACHE_DIR), not the checkout's: a model whose C++ another
    checkout or an earlier run already compiled (every model whose RTL did not
    change, and Verilator's runtime, about 13 s of g++ per model) is then not
    compiled again, in a fresh clone too. Paths under the checkout count
    relative to it (CCACHE_BASEDIR) and the working folder is not hashed, so
    checkouts at different paths share the entries."""
    if shutil.which("ccache") is None:
        return {}
    return {"OBJCACHE": "ccache", "CCACHE_BASEDIR": str(ROOT), "CCACHE_NOHASHDIR": "1"}


def lint(files: list[Path], top: str, parameters: dict[str, str] | None = None) -> str:
    """verilator --lint-only -Wall output (empty when clean); `parameters`: the top's
    overrides, as SystemVerilog literals (a bit as 1'b1)."""
    verilator = shutil.which("verilator")
    assert verilator, "verilator is not installed (make test installs it)"
    overrides = [f"-G{k}={v}" for k, v in (parameters or {}).items()]
    out = subprocess.run(
        [verilator, "--lint-only", "-Wall", "--top-module", top, *overrides, *map(str, files)],
        capture_output=True,
        text=True,
    )
    return (out.stdout + out.stderr).strip()
