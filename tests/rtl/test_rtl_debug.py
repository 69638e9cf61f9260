"""Debugging a bench (docs/hardware.md): `edm rtl test`, the run's seed, the
waveform. On the cheapest bench, tb_fifo (a 2-deep FIFO, seconds a run)."""

from __future__ import annotations

import fcntl
import re
from pathlib import Path

import pytest

import fsthier
from rtlsim import BENCHES, ROOT, TESTS, WAVES, build_model, compiler_cache, failed_cases, replay_command, run_bench

# The model test_rtl_common.test_fifo[1-0] builds: the digest runs reuse it.
FIFO = {"DEPTH_LOG2": 1, "REG_HEAD": 0}


def edm(*argv: str) -> int:
    from edm.cli import main

    return main(["rtl", "test", *argv])


def digests(tmp_path, seed: int, run: int) -> str:
    out = tmp_path / f"digest_{seed}_{run}.txt"
    run_bench("tb_fifo", FIFO, name="edm_fifo_1_0", seed=seed, extra_env={"EDM_DIGEST_FILE": str(out)})
    return out.read_text()


def test_same_seed_same_stimulus_other_seed_other(tmp_path):
    first, again, other = digests(tmp_path, 0, 1), digests(tmp_path, 0, 2), digests(tmp_path, 7, 1)
    assert re.fullmatch(r"fifo_matches_a_deque [0-9a-f]{16}\n", first), first
    assert first == again
    assert first != other


def test_models_compile_the_same_in_every_checkout():
    """A model's C++ names no path of this checkout (Verilator writes the
    sources' paths into its convergence checks), and ccache counts paths under
    the checkout relative to it: the user's cache then serves a model compiled
    in any checkout to every other (rtlsim.compiler_cache)."""
    run_bench("tb_fifo", FIFO, name="edm_fifo_1_0")
    generated = [p for p in (TESTS / "sim_build" / "edm_fifo_1_0").iterdir() if p.suffix in (".cpp", ".h")]
    assert any("VL_FATAL_MT" in p.read_text() for p in generated), "no convergence check to look at"
    naming = [p.name for p in generated if str(ROOT) in p.read_text()]
    assert not naming, f"the model's C++ names the checkout ({ROOT}): {naming}"
    env = compiler_cache()
    if env:  # ccache installed (make setup installs it)
        assert env["CCACHE_BASEDIR"] == str(ROOT) and "CCACHE_DIR" not in env, env


def test_waves_write_an_fst_with_the_top_clock(capsys):
    assert edm("fifo", "--param", "DEPTH_LOG2=1", "--seed", "3", "--waves") == 0
    printed = capsys.readouterr().out
    path = re.search(r"^waveform: (\S+\.fst)", printed, re.M)
    assert path, printed
    fst = path.group(1)
    # Next to the bench's results, in a build folder apart from the untraced models'.
    results = re.search(r"^INFO: Results file: (\S+)", printed, re.M)
    assert fst.startswith(str(TESTS / "sim_build_waves")) and Path(results.group(1)).parent == Path(fst).parent
    names = {re.sub(r" \[.*\]$", "", n) for n in fsthier.signals(fst)}
    assert {"edm_fifo.clk", "edm_fifo.wr_data", "edm_fifo.rd_data"} <= names, sorted(names)[:20]
    assert "edm rtl test tb_fifo: passed (seed 3)" in printed


def test_list_and_bad_names(capsys):
    assert edm("--list") == 0
    listing = capsys.readouterr().out
    assert "tb_fifo  top edm_fifo  cases: fifo_matches_a_deque" in listing and "tb_switch" in listing
    for argv, says in ((["nope"], f"no bench 'nope'; benches: {', '.join(sorted(BENCHES))}\n"),
                       (["tb_fabric_top"], "tb_fabric_top is the top of tb_fabric, tb_fabric_interop, tb_ycsb"),
                       (["fifo", "--case", "nope"], "tb_fifo has no case 'nope'; cases: fifo_matches_a_deque"),
                       (["fifo", "--param", "DEPTH=3"], "edm_fifo has the parameters WIDTH, DEPTH_LOG2, REG_HEAD")):
        assert edm(*argv) == 2, argv
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err


def test_a_failure_names_the_command_that_replays_it(tmp_path):
    results = tmp_path / "results.xml"
    results.write_text('<testsuites><testsuite><testcase name="a"/><testcase name="b"><failure/></testcase>'
                       '</testsuite></testsuites>')
    assert failed_cases(results) == ["b"]
    assert failed_cases(tmp_path / "none.xml") == ["(no results: the simulation ended abnormally)"]
    assert replay_command("tb_fifo", testcase="b", seed=5, parameters={"DEPTH_LOG2": 1},
                          extra_env={"RATE_CASE": "fast 1"}) == \
        "RATE_CASE='fast 1' edm rtl test tb_fifo --case b --seed 5 --param DEPTH_LOG2=1"


@pytest.mark.parametrize("bench", ["tb_fabric", "tb_switch", "tb_mem_node"])
def test_save_files_name_signals_of_their_top(bench):
    """Every signal a GTKWave save file shows is under the bench's top and
    ends in a name its RTL declares (renaming a signal shows here)."""
    spec = BENCHES[bench]
    text = (WAVES / spec.gtkw).read_text()
    words = set(re.findall(r"\w+", " ".join(p.read_text() for p in spec.sources())))
    shown = [line for line in text.splitlines() if line and line[0] not in "@-[*"]
    assert len(shown) >= 10, shown
    for name in shown:
        path = re.sub(r"\[\d+:\d+\]$", "", name)   # a vector's bit range
        assert path.startswith(spec.toplevel + ".") and path.split(".")[-1].split("[")[0] in words, name


def test_every_bench_is_registered():
    """`edm rtl test` and the pytest files find a bench only through rtlsim.BENCHES."""
    assert {p.stem for p in TESTS.glob("tb_*.py")} == set(BENCHES)


class _Builds:
    """A runner that only counts its builds (build_model's lock protocol alone)."""

    def __init__(self):
        self.builds = 0

    def build(self, build_dir, hdl_toplevel, **_):
        self.builds += 1
        (build_dir / hdl_toplevel).write_text("")  # the model's executable


def test_runs_of_one_model_share_it_and_a_build_waits_for_them(tmp_path):
    """A second run of a built model runs it as it is, beside the first
    (both hold its lock shared: side by side under pytest -n); a build, which
    holds it alone, cannot start while one runs; other parameters under the
    same name, a changed source or a lost executable build it again (flock
    descriptions of one file conflict as two processes' would)."""
    runner = _Builds()
    source = tmp_path / "top.sv"
    source.write_text("module top; endmodule")
    lock_file = tmp_path / "m.lock"
    with open(lock_file, "w") as run_a, open(lock_file, "w") as run_b:
        build_model(runner, run_a, "top", {"N": 4}, tmp_path, ["-O2"], [source], False)
        build_model(runner, run_b, "top", {"N": 4}, tmp_path, ["-O2"], [source], False)  # beside run_a
        assert runner.builds == 1
        with open(lock_file, "w") as build, pytest.raises(BlockingIOError):
            fcntl.flock(build, fcntl.LOCK_EX | fcntl.LOCK_NB)
    for parameters, text in (({"N": 8}, "module top; endmodule"), ({"N": 8}, "module top; wire w; endmodule")):
        source.write_text(text)
        with open(lock_file, "w") as lock:
            build_model(runner, lock, "top", parameters, tmp_path, ["-O2"], [source], False)
    assert runner.builds == 3
    with open(lock_file, "w") as lock:
        build_model(runner, lock, "top", {"N": 8}, tmp_path, ["-O2"], [source], False, shared=False)
        with open(lock_file, "w") as run, pytest.raises(BlockingIOError):
            fcntl.flock(run, fcntl.LOCK_SH | fcntl.LOCK_NB)  # unshared: a traced or non-pytest run
    assert runner.builds == 4
    (tmp_path / "top").unlink()   # a folder whose executable is gone is built again
    with open(lock_file, "w") as lock:
        build_model(runner, lock, "top", {"N": 8}, tmp_path, ["-O2"], [source], False)
    assert runner.builds == 5
