"""Clio's allocation interface and a workload over it (issue 24; Clio,
../shared/papers/002, §3–§4; docs/related.md "Clio: translation and protection").

* :class:`MemoryNodeSpaces` is one translating memory node's slow path: it
  hands out address-space ids, allocates virtual ranges whose pages all fit
  the node's hash page table (Clio's overflow-free allocation: a range whose
  pages would overflow a bucket is skipped, the retries counted), backs each
  page with a free physical frame, and on free returns the TLB invalidations
  the node must apply (``edm_mem_node_xl``'s management port).
* :class:`RemoteMemory` is the compute side: one process's remote memory,
  an address space on each memory node it uses; ``allocate`` returns a
  :class:`Region` whose ``address(offset)`` is the 64-bit address word a
  request carries (``edm.protocol.codec.space_address``).
* :func:`generate` makes a seeded request stream over such regions (sizes,
  read/write/RMW mix, a fraction aimed outside every mapping); each request is
  split at page boundaries, as a translating node requires.
* :func:`evaluate` runs the stream through each node's translation model
  (``edm.related.clio_model``, the RTL's twin) and checks that nothing
  outside a mapping is served.
* :func:`simulate` turns the simulator's protection on (``protection*``
  fields) for EDM and every baseline: what each protocol's memory nodes
  served and denied, and a read's latency served and denied.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from edm.args import integer, out_file, real
from edm import protocol
from edm.protocol import codec
from edm.related.clio_model import BucketFull, PageTable, Translator

ASID_LIMIT = 1 << protocol.ADDR_ASID_W
SPACE_BYTES = 1 << protocol.ADDR_ASID_LSB


class AllocationError(Exception):
    """No free frames, address space or page-table room for a request."""


@dataclass
class Region:
    """A remote region: ``size`` bytes at ``vaddr`` of space ``asid`` on ``node``."""

    node: int
    asid: int
    vaddr: int
    size: int
    writable: bool = True

    def address(self, offset: int = 0) -> int:
        """The address word of byte ``offset`` of the region."""
        if not 0 <= offset < self.size:
            raise ValueError(f"offset {offset} outside a region of {self.size} bytes")
        return codec.space_address(self.asid, self.vaddr + offset)


@dataclass
class MemoryNodeSpaces:
    """One memory node's address spaces, page table and free frames."""

    node: int
    frames: int                       # physical frames for data
    page_bits: int = 12
    buckets_log2: int = 10
    ways: int = 4
    seed: int = 0
    table: PageTable = field(init=False)
    retries: int = 0                  # virtual ranges skipped for a full bucket

    def __post_init__(self):
        if self.frames < 1:
            raise ValueError(f"memory node {self.node}: frames = {self.frames}, need at least 1")
        # The page table sits above the data frames.
        self.table = PageTable(self.buckets_log2, self.ways, self.frames << self.page_bits, self.page_bits)
        rng = random.Random(self.seed)
        self.free_frames = list(range(self.frames))
        rng.shuffle(self.free_frames)   # frames of one region are not contiguous
        self.spaces: dict[int, dict[int, int]] = {}   # asid -> {vaddr: pages}
        self.next_vpn: dict[int, int] = {}
        self.next_asid = 1

    def create_space(self) -> int:
        for _ in range(ASID_LIMIT):
            asid, self.next_asid = self.next_asid, self.next_asid % (ASID_LIMIT - 1) + 1
            if asid not in self.spaces:
                self.spaces[asid] = {}
                self.next_vpn[asid] = 1     # page 0 stays unmapped: a null pointer faults
                return asid
        raise AllocationError(f"memory node {self.node}: every address-space id is in use")

    def allocate(self, asid: int, size: int, writable: bool = True) -> int:
        """Maps ceil(size / page) pages of ``asid``; returns the virtual address."""
        if asid not in self.spaces:
            raise AllocationError(f"memory node {self.node}: no address space {asid}")
        pages = -(-size // (1 << self.page_bits))
        if size < 1 or pages > len(self.free_frames):
            raise AllocationError(f"memory node {self.node}: {size} bytes: {len(self.free_frames)} frames free")
        # Clio's overflow-free rule: slide the range until every page fits its
        # bucket. Consecutive pages fall in different buckets, so after as many
        # tries as there are buckets (times 4) the table is taken as full.
        vpn = self.next_vpn[asid]
        for _ in range(4 << self.buckets_log2):
            if (vpn + pages) << self.page_bits > SPACE_BYTES:
                break
            if self.table.fits(asid, range(vpn, vpn + pages)):
                break
            self.retries += 1
            vpn += 1
        else:
            raise AllocationError(f"memory node {self.node}: page table too full for {pages} pages of space {asid}")
        if (vpn + pages) << self.page_bits > SPACE_BYTES:
            raise AllocationError(f"memory node {self.node}: space {asid} has no room for {pages} pages")
        for v in range(vpn, vpn + pages):
            try:
                self.table.install(asid, v, self.free_frames.pop(), writable)
            except BucketFull as e:  # fits() said there is room
                raise AssertionError(e) from None
        self.next_vpn[asid] = vpn + pages
        self.spaces[asid][vpn << self.page_bits] = pages
        return vpn << self.page_bits

    def free(self, asid: int, vaddr: int) -> list[tuple[int, int | None]]:
        """Unmaps the region at ``vaddr``; returns the TLB invalidations (asid, vpn)."""
        pages = self.spaces.get(asid, {}).pop(vaddr, None)
        if pages is None:
            raise AllocationError(f"memory node {self.node}: space {asid} has no region at {vaddr:#x}")
        shootdowns = []
        for v in range(vaddr >> self.page_bits, (vaddr >> self.page_bits) + pages):
            self.free_frames.append(self.table.lookup(asid, v).frame)
            self.table.remove(asid, v)
            shootdowns.append((asid, v))
        return shootdowns

    def destroy_space(self, asid: int) -> list[tuple[int, int | None]]:
        """Frees every region of ``asid``; one invalidation of the whole space."""
        for vaddr in list(self.spaces.get(asid, {})):
            self.free(asid, vaddr)
        self.spaces.pop(asid, None)
        return [(asid, None)]


class RemoteMemory:
    """A process's remote memory over several memory nodes (the compute side)."""

    def __init__(self, nodes: dict[int, MemoryNodeSpaces]):
        self.nodes = nodes
        self.asids: dict[int, int] = {}

    def allocate(self, node: int, size: int, writable: bool = True) -> Region:
        n = self.nodes[node]
        if node not in self.asids:
            self.asids[node] = n.create_space()
        asid = self.asids[node]
        return Region(node, asid, n.allocate(asid, size, writable), size, writable)

    def free(self, region: Region) -> list[tuple[int, int | None]]:
        return self.nodes[region.node].free(region.asid, region.vaddr)


@dataclass(frozen=True)
class Request:
    kind: str            # RREQ, WREQ, RMWREQ
    node: int
    address: int         # the address word (asid, vaddr)
    length: int          # bytes read or written (RMW: 8)
    inside: bool         # the generator aimed it inside a region that allows it


def split_at_pages(vaddr: int, length: int, page_bits: int) -> list[tuple[int, int]]:
    """(vaddr, length) pieces that each stay inside one page."""
    out, page = [], 1 << page_bits
    while length > 0:
        n = min(length, page - vaddr % page)
        out.append((vaddr, n))
        vaddr, length = vaddr + n, length - n
    return out


def generate(processes: list[list[Region]], n: int, *, seed: int, write_ratio: float = 0.3,
             rmw_ratio: float = 0.05, outside: float = 0.05, sizes=(8, 64, 256, 1024),
             page_bits: int = 12) -> list[Request]:
    """``n`` requests from the processes' regions (each process uses its own);
    a fraction ``outside`` aims past a region's end, at another space or a
    read-only region's bytes with a write. Accesses are split at pages."""
    rng = random.Random(seed)
    out: list[Request] = []
    all_regions = [r for regions in processes for r in regions]
    while len(out) < n:
        regions = rng.choice(processes)
        r = rng.choice(regions)
        kind = rng.choices(["RREQ", "WREQ", "RMWREQ"], [1 - write_ratio - rmw_ratio, write_ratio, rmw_ratio])[0]
        length = 8 if kind == "RMWREQ" else min(rng.choice(sizes), r.size)
        offset = rng.randrange(0, r.size - length + 1)
        if kind == "RMWREQ":
            offset -= offset % 8
        asid, vaddr, inside = r.asid, r.vaddr + offset, kind == "RREQ" or r.writable
        if rng.random() < outside:
            inside = False
            trick = rng.randrange(3)
            if trick == 0:                # past the region's last page
                vaddr = r.vaddr + (-(-r.size >> page_bits) << page_bits) + offset % (1 << page_bits)
            elif trick == 1:              # the same address in a space the process does not own
                others = [o for o in all_regions if o.node == r.node and o.asid != r.asid]
                asid = rng.choice(others).asid if others else (r.asid + 1) % ASID_LIMIT
            else:                         # a space no one has
                asid = ASID_LIMIT - 1 - rng.randrange(16)
        for piece, n_bytes in split_at_pages(vaddr, length, page_bits):
            out.append(Request(kind, r.node, codec.space_address(asid, piece), n_bytes, inside))
    return out[:n]


@dataclass
class Evaluation:
    requests: int = 0
    served: int = 0
    denied: int = 0
    tlb_hits: int = 0
    walks: int = 0
    served_outside: int = 0      # must stay 0
    denied_inside: int = 0       # must stay 0

    @property
    def hit_rate(self) -> float:
        return self.tlb_hits / max(1, self.tlb_hits + self.walks)


def evaluate(nodes: dict[int, MemoryNodeSpaces], requests: list[Request], tlb_entries: int = 8) -> Evaluation:
    """Every request through its node's translation model, in order."""
    xl = {k: Translator(n.table, tlb_entries) for k, n in nodes.items()}
    ev = Evaluation()
    for q in requests:
        asid, vaddr = codec.split_space_address(q.address)
        t = xl[q.node].translate(asid, vaddr, q.length, q.kind != "RREQ")
        ev.requests += 1
        ev.denied += t.denied
        ev.served += not t.denied
        ev.served_outside += not t.denied and _outside(nodes[q.node], asid, vaddr, q)
        ev.denied_inside += q.inside and t.denied
    ev.tlb_hits = sum(x.hits for x in xl.values())
    ev.walks = sum(x.walks for x in xl.values())
    return ev


def _outside(node: MemoryNodeSpaces, asid: int, vaddr: int, q: Request) -> bool:
    """Whether the page table itself forbids the access (the ground truth)."""
    m = node.table.lookup(asid, vaddr >> node.page_bits)
    return m is None or (q.kind != "RREQ" and not m.writable)


def translation_cycles(ways: int, dram_latency_cycles: int) -> dict[str, int]:
    """Cycles the RTL's translation adds to a request at the memory node
    (edm_mem_translate; measured by `edm rtl latency --translation`): none on
    a TLB hit; on a miss the walk's 2 x ways reads issued one per cycle, the
    last answer dram_latency_cycles later, one cycle to fill the TLB."""
    return {"hit": 0, "miss": 2 * ways + dram_latency_cycles + 1}


SIM_PROTOCOLS = ("edm", "edm-paper", "dctcp", "ird", "pfabric", "pfc_dcqcn", "cxl", "fastpass")


def simulate(seed: int = 1, messages: int = 4000, outside: float = 0.05, protocols=SIM_PROTOCOLS) -> list[dict]:
    """The simulator with protection on: 16 nodes, load 0.3, 512-byte reads
    and writes, a 50 ns memory (``dram_ps``). Per protocol: the run with a
    fraction ``outside`` aimed outside the mappings (requests checked,
    denied, served outside a mapping: must be 0), and the mean read latency
    with every request inside (all served) and every one outside (all
    denied: an empty response, no memory access)."""
    from edm import sim

    base = {"nodes": 16, "load": 0.3, "messages": messages, "message_bytes": 512, "dram_ps": 50_000,
            "seed": seed, "protection": 1, "protection_seed": seed}

    def run_at(protocol: str, share: float):
        return sim.run({**base, "protocol": protocol, "protection_outside": share})

    def read_ns(protocol: str, share: float) -> float:
        df = run_at(protocol, share).messages
        return float(df.loc[df["op"] == "read", "latency_ns"].mean())

    rows = []
    for name in protocols:
        s = run_at(name, outside).summary
        rows.append({"protocol": name, **{k: s[k] for k in (
            "protection_checks", "denied_reads", "denied_writes", "served_outside", "denied_inside",
            "delivered_bytes")},
            "read_served_ns": read_ns(name, 0.0), "read_denied_ns": read_ns(name, 1.0)})
    return rows


def simulation_table(rows: list[dict]) -> list[str]:
    """:func:`simulate`'s rows as a Markdown table."""
    out = ["| protocol | checked | denied reads | denied writes | served outside | denied inside "
           "| read served (ns) | read denied (ns) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['protocol']} | {r['protection_checks']} | {r['denied_reads']} | {r['denied_writes']} "
                   f"| {r['served_outside']} | {r['denied_inside']} | {r['read_served_ns']:.1f} "
                   f"| {r['read_denied_ns']:.1f} |")
    return out


def run(args: argparse.Namespace) -> dict:
    """Allocation, a workload and its translation, as the CLI reports them."""
    nodes = {k: MemoryNodeSpaces(k, args.frames, page_bits=args.page_bits, buckets_log2=args.buckets_log2,
                                 ways=args.ways, seed=args.seed + k)
             for k in range(args.memory_nodes)}
    rng = random.Random(args.seed)
    processes, start = [], time.perf_counter()
    for _ in range(args.processes):
        mem = RemoteMemory(nodes)
        regions = [mem.allocate(rng.randrange(args.memory_nodes), rng.choice([4096, 65536, 1 << 20]),
                                writable=rng.random() < 0.9) for _ in range(args.regions)]
        processes.append(regions)
    alloc_s = time.perf_counter() - start
    reqs = generate(processes, args.requests, seed=args.seed, outside=args.outside, page_bits=args.page_bits)
    ev = evaluate(nodes, reqs, args.tlb_entries)
    cyc = translation_cycles(args.ways, args.dram_cycles)
    return {"processes": args.processes, "regions": args.processes * args.regions,
            "pages_mapped": sum(len(s) for n in nodes.values() for b in n.table.slots.values() for s in b if s),
            "allocation_retries": sum(n.retries for n in nodes.values()), "allocation_seconds": alloc_s,
            **asdict(ev), "tlb_hit_rate": ev.hit_rate, "translation_cycles": cyc,
            "mean_translation_cycles": (ev.walks * cyc["miss"]) / max(1, ev.tlb_hits + ev.walks),
            "cycle_ns": protocol.CYCLE_PS / 1000,
            "simulator": simulate(args.seed, args.sim_messages, args.outside) if args.sim_messages else []}


def default_args(**overrides) -> argparse.Namespace:
    """The CLI's defaults (``edm related clio``), with ``overrides``."""
    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers())
    args = p.parse_args(["clio"])
    for k, v in overrides.items():
        setattr(args, k, v)
    return args


def report_section(seed: int = 1) -> str:
    """For ``edm reproduce``'s "related systems" part: the allocation and
    protection figures of docs/related.md "Clio", as Markdown."""
    args = default_args(seed=seed)
    r = run(args)
    c = r["translation_cycles"]
    return "\n".join([
        "### Clio: translation and protection", "",
        f"`edm related clio --seed {seed}`: {r['regions']} regions ({r['pages_mapped']} pages of 4 KiB) on "
        f"{args.memory_nodes} memory nodes, {r['requests']} requests, {args.outside:.0%} aimed outside.", "",
        "| served | denied | served outside a mapping | denied inside | TLB hit rate | translation, hit / miss |",
        "|---:|---:|---:|---:|---:|---|",
        f"| {r['served']} | {r['denied']} | {r['served_outside']} | {r['denied_inside']} | {r['tlb_hit_rate']:.3f} "
        f"| +{c['hit']} / +{c['miss']} cycles |", "",
        f"The simulator's memory nodes with protection on (`edm.related.clio.simulate`: 16 nodes, load 0.3, "
        f"512-byte messages, a 50 ns memory, {args.sim_messages} per run, {args.outside:.0%} aimed outside; read latency with "
        f"every request inside and every one outside):", "",
        *simulation_table(r["simulator"]), ""])


def reproduce_section(out: Path, quick: bool = False) -> str:
    """``edm reproduce``'s entry (edm.reproduce.related): writes out/clio.md."""
    out.mkdir(parents=True, exist_ok=True)
    text = report_section(seed=1)
    (out / "clio.md").write_text(text)
    return text


def _main(args: argparse.Namespace) -> int:
    try:
        r = run(args)
    except AllocationError as e:
        raise SystemExit(f"edm related clio: {e} (more --frames or --buckets-log2, fewer --regions)") from None
    print(f"Clio on EDM: {r['processes']} processes, {r['regions']} regions ({r['pages_mapped']} pages, "
          f"{r['allocation_retries']} ranges skipped for full buckets) on {args.memory_nodes} memory nodes; "
          f"{r['requests']} requests, seed {args.seed}")
    print(f"  served {r['served']}, denied {r['denied']} (aimed outside: {args.outside:.0%}); "
          f"served outside a mapping: {r['served_outside']}, denied inside: {r['denied_inside']}")
    print(f"  TLB ({args.tlb_entries} entries): {r['tlb_hits']} hits, {r['walks']} walks, "
          f"hit rate {r['tlb_hit_rate']:.3f}")
    c = r["translation_cycles"]
    print(f"  translation: hit +{c['hit']} cycles, miss +{c['miss']} cycles ({2 * args.ways} reads, DRAM "
          f"{args.dram_cycles} cycles) = {c['miss'] * r['cycle_ns']:.2f} ns; mean "
          f"+{r['mean_translation_cycles']:.2f} cycles per request")
    if r["simulator"]:
        print(f"  simulator ({args.sim_messages} messages per run, {args.outside:.0%} outside; "
              "read latency all served / all denied):")
        for row in r["simulator"]:
            print(f"    {row['protocol']:<10} checked {row['protection_checks']}, denied {row['denied_reads']} reads "
                  f"+ {row['denied_writes']} writes, served outside {row['served_outside']}, denied inside "
                  f"{row['denied_inside']}; read {row['read_served_ns']:.1f} / {row['read_denied_ns']:.1f} ns")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(r, indent=1))
    leaks = r["served_outside"] or r["denied_inside"]
    leaks = leaks or any(row["served_outside"] or row["denied_inside"] for row in r["simulator"])
    return 1 if leaks else 0


def add_parser(rsub) -> None:
    p = rsub.add_parser("clio", help="Clio: allocate remote regions per address space, translate and protect",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--memory-nodes", type=integer(1, 1024), default=2, help="memory nodes, 1..1024 (default 2)")
    p.add_argument("--frames", type=integer(1, 1 << 24), default=4096, help="data frames (pages) per memory node")
    p.add_argument("--page-bits", type=integer(6, 30), default=12,
                   help="log2 of the page size, 6..30 (12: 4 KiB; 21: 2 MiB)")
    p.add_argument("--buckets-log2", type=integer(0, 24), default=10, help="page-table buckets per node, log2")
    p.add_argument("--ways", type=integer(1, 64), default=4,
                   help="slots per page-table bucket (a walk reads 2 x ways words)")
    p.add_argument("--processes", type=integer(1, 4096), default=8)
    p.add_argument("--regions", type=integer(1, 4096), default=4, help="regions each process allocates")
    p.add_argument("--requests", type=integer(1), default=100_000)
    p.add_argument("--outside", type=real(0.0, 1.0), default=0.05,
                   help="fraction of requests aimed outside a mapping, 0..1")
    p.add_argument("--tlb-entries", type=integer(0, 1 << 16), default=8)
    p.add_argument("--dram-cycles", type=integer(0, 1 << 16), default=4,
                   help="DRAM read latency in PHY cycles (the RTL bench's)")
    p.add_argument("--sim-messages", type=integer(0, 10**7), default=4000,
                   help="messages per simulator run of every protocol with protection on (0: skip the simulator)")
    p.add_argument("--seed", type=integer(0, 2**63 - 1), default=1)
    p.add_argument("--json", type=out_file, default=None, help="also write the figures as JSON here")
    p.set_defaults(func=_main)
