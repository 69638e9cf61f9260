"""``edm rtl test``: one cocotb bench by name, with its seed, parameters, test
case and, on request, a waveform.

Runs the bench the way the pytest files under ``tests/rtl`` do: through
``rtlsim.run_bench``, the one runner (Verilator via cocotb's runner). The
benches live in the repository, not in the package: the command finds them
from this module's place in the editable install (``<checkout>/python/edm``),
so it needs a checkout. ``--waves`` (or ``EDM_WAVES=1``) builds the model with
FST tracing in a folder of its own (``tests/rtl/sim_build_waves/``) and prints
the waveform's path; a failed case prints the command that replays it.
"""

from __future__ import annotations

import argparse
import re
import sys


def _rtlsim():
    """tests/rtl's runner, importable (edm.rtl.latency.testbenches finds it)."""
    from edm.rtl.latency import testbenches  # noqa: PLC0415

    testbenches("edm rtl test", "rtlsim.py")
    import rtlsim  # noqa: PLC0415

    return rtlsim


def cases(rtlsim, bench: str) -> list[str]:
    """The bench's cocotb test cases, in file order."""
    text = (rtlsim.TESTS / f"{bench}.py").read_text()
    return re.findall(r"^@cocotb\.test\([^\n]*\)\s*\nasync def (\w+)", text, re.M)


def parameters(rtlsim, bench: str) -> list[str]:
    """The parameters of the bench's top, as its SystemVerilog header declares them."""
    b = rtlsim.BENCHES[bench]
    for path in b.sources():
        text = path.read_text()
        m = re.search(rf"^\s*module\s+{b.toplevel}\b(.*?)\)\s*;", text, re.M | re.S)
        if m:
            header = re.sub(r"//[^\n]*", "", m.group(1))
            return re.findall(r"\bparameter\b[^=,;()]*?\b(\w+)\s*=", header)
    return []


def resolve(rtlsim, name: str) -> str | None:
    """A bench by its module name (tb_fifo), without tb_ (fifo), or by its top
    (edm_fifo) when one bench alone runs on it."""
    for candidate in (name, f"tb_{name}"):
        if candidate in rtlsim.BENCHES:
            return candidate
    on_top = [b for b, bench in rtlsim.BENCHES.items() if bench.toplevel == name]
    return on_top[0] if len(on_top) == 1 else None


def _value(text: str) -> int | str:
    try:
        return int(text, 0)
    except ValueError:
        return text   # a SystemVerilog literal such as 64'h0123, passed to Verilator as written


def _list(rtlsim) -> int:
    for name, bench in sorted(rtlsim.BENCHES.items()):
        print(f"{name}  top {bench.toplevel}  cases: {', '.join(cases(rtlsim, name))}")
        print(f"    parameters: {', '.join(parameters(rtlsim, name)) or '-'}"
              + (f"  (set: {', '.join(f'{k}={v}' for k, v in bench.parameters.items())})" if bench.parameters else ""))
    return 0


def _test(args: argparse.Namespace) -> int:
    try:
        rtlsim = _rtlsim()
    except SystemExit as e:   # not a checkout: one line, exit 2
        print(e, file=sys.stderr)
        return 2
    if args.list:
        return _list(rtlsim)
    if not args.bench:
        print("edm rtl test: name a bench (edm rtl test --list shows them)", file=sys.stderr)
        return 2
    bench = resolve(rtlsim, args.bench)
    if bench is None:
        on_top = sorted(b for b, spec in rtlsim.BENCHES.items() if spec.toplevel == args.bench)
        found = f"{args.bench} is the top of {', '.join(on_top)}: name one" if on_top else f"no bench {args.bench!r}"
        print(f"edm rtl test: {found}; benches: {', '.join(sorted(rtlsim.BENCHES))}", file=sys.stderr)
        return 2
    known_cases = cases(rtlsim, bench)
    for case in (args.case or "").split(",") if args.case else []:
        if case not in known_cases:
            print(f"edm rtl test: {bench} has no case {case!r}; cases: {', '.join(known_cases)}", file=sys.stderr)
            return 2
    known_params = parameters(rtlsim, bench)
    params = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or key not in known_params:
            print(f"edm rtl test: --param {item!r}: {rtlsim.BENCHES[bench].toplevel} has the parameters "
                  f"{', '.join(known_params) or '(none)'} (K=V)", file=sys.stderr)
            return 2
        params[key] = _value(value)
    top = rtlsim.BENCHES[bench].toplevel
    full = {**rtlsim.BENCHES[bench].parameters, **params}
    # Its own build folder per parameter set: a run never rebuilds another's model.
    name = re.sub(r"[^\w]", "", "_".join(["cli", top] + [f"{k}{v}" for k, v in sorted(full.items())]))
    seed = rtlsim.seed_from_env() if args.seed is None else args.seed
    waves = args.waves or rtlsim.waves_from_env()
    failed = rtlsim.run_bench(bench, params, name=name, testcase=args.case, seed=seed, waves=waves)
    print(f"edm rtl test {bench}: {'FAILED ' + ', '.join(failed) if failed else 'passed'} (seed {seed})")
    return 1 if failed else 0


def add_subparser(psub) -> None:
    s = psub.add_parser(
        "test", help="run one RTL bench (cocotb + Verilator) by name, with its seed, parameters and waveform",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("bench", nargs="?", help="the bench: tb_fifo, fifo, or its top edm_fifo (see --list)")
    s.add_argument("--list", action="store_true", help="list the benches, their cases and parameters")
    s.add_argument("--case", metavar="NAME", help="run only these test cases (comma-separated)")
    s.add_argument("--seed", type=int, default=None,
                   help="seed of every random stream (default $EDM_SEED, else 0: the streams make test runs)")
    s.add_argument("--param", action="append", default=[], metavar="K=V",
                   help="a parameter of the top (repeatable); builds a model of its own")
    s.add_argument("--waves", action="store_true",
                   help="build with FST tracing (also EDM_WAVES=1) and write the waveform next to the results")
    s.set_defaults(func=_test)
