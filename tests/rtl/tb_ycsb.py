"""cocotb: the YCSB client and key-value store over the whole RTL fabric
(tests/rtl/tb_fabric_top.sv: compute node, switch, memory node, their PHY
paths and links; the bench of tests/rtl/tb_fabric.py plays the DRAM and the
compute node's local memory).

The store's memory image (python/edm/ycsb/store.py) is loaded into the memory
node's DRAM model; the client's requests (RREQ, WREQ, RMWREQ CAS) go to the
compute node's request port; each completion hands the client the bytes the
RTL wrote into local memory, i.e. what came back from the DRAM through the
fabric. The client checks every read against its dict; the bench also checks
every read and CAS result against the Python memory image, and the DRAM
against the image at the end, and that no error counter moved.

Configuration from the environment (set by python/edm/ycsb/rtl.py):
EDM_YCSB_WORKLOAD, EDM_YCSB_OPERATIONS, EDM_YCSB_OUTSTANDING, EDM_YCSB_SEED,
EDM_YCSB_RECORDS, EDM_YCSB_DISTRIBUTION (optional), EDM_YCSB_JSON (where to
write every operation's cycles).

With write acknowledgements (the top built with ACKS = 1, $EDM_FABRIC_ACKS=1,
docs/protocol.md §4b) every write must also get its outcome, acknowledged;
an operation still ends at its writes' posted completion (the client's
latency convention), and each write's posted and acknowledged times (cycles
from its issue) are written to the JSON beside the operations.
"""

from __future__ import annotations

import json
import os

import cocotb

import tb_fabric
from edm import protocol
from edm.ycsb.store import new_client
from tb_fabric import K_RMW, K_RREQ, K_WREQ, new_fabric, outcomes_of

KINDS = {"read": K_RREQ, "write": K_WREQ, "cas": K_RMW}


@cocotb.test()
async def ycsb(dut):
    env = os.environ
    workload = env.get("EDM_YCSB_WORKLOAD", "a")
    operations = int(env.get("EDM_YCSB_OPERATIONS", "100"))
    outstanding = int(env.get("EDM_YCSB_OUTSTANDING", "4"))
    seed = int(env.get("EDM_YCSB_SEED", "1"))
    records = int(env.get("EDM_YCSB_RECORDS", "200"))
    distribution = env.get("EDM_YCSB_DISTRIBUTION") or None
    nm = len(dut.dram_rd_valid)
    client, image = new_client(workload, records=records, operations=operations, outstanding=outstanding,
                               seed=seed, nodes=nm, distribution=distribution)
    f = await new_fabric(dut, seed)
    if tb_fabric.acks():
        dut.cfg_give_up.value = tb_fabric.GIVE_UP
        dut.cfg_ack_timeout.value = tb_fabric.ACK_TIMEOUT
    writes = []
    # The memory nodes' DRAM holds the store (the bench's RSIZE bounds every DRAM address).
    tb_fabric.RSIZE = client.store.layout.node_bytes
    for m in range(nm):
        f.dram[m][:] = image.mem[m]             # in place: the DRAM models hold these arrays
    pending: dict[int, object] = {}
    cycle_ps = protocol.CYCLE_PS

    def submit(reqs):
        for q in reqs:
            assert q.node >= 0, "the RTL run has no local objects"
            if q.kind == "cas":
                r = f.request(0, K_RMW, q.node, q.addr, 8, op=protocol.RMW_CAS, arg0=q.arg0, arg1=q.arg1)
            else:
                r = f.request(0, KINDS[q.kind], q.node, q.addr, q.length)
            if q.kind == "write":   # the bench made up data: the store's value instead
                f.lmem[0][r["loff"]:r["loff"] + q.length] = q.data
                r["data"] = q.data
                writes.append(r)
            pending[id(r)] = (q, r)

    submit(client.start(0))
    seen = 0
    limit = 2000 + 4000 * operations
    while not client.done():
        await f.step()
        assert f.cycle < limit, f"the fabric did not finish: {f.status()}"
        while seen < len(f.done):
            r = f.done[seen]
            seen += 1
            q, _ = pending.pop(id(r))
            want = image.apply(q)            # the Python image, in completion order
            if q.kind != "write":
                q.result = r["got"]
                assert q.result == want, (f"{q.kind} of {q.length} B at {q.addr:#x}: the RTL returned "
                                          f"{q.result[:16].hex()}..., the memory image holds {want[:16].hex()}...")
            submit(client.complete(q, f.cycle * cycle_ps))
    await f.run()                              # the last writes' data reach the DRAM
    write_times = []
    if tb_fabric.acks():   # every write acknowledged (none failed, none left without an outcome)
        while len(f.outcomes) < len(writes):
            await f.step()
            assert f.cycle < limit + tb_fabric.GIVE_UP, f"{len(writes) - len(f.outcomes)} writes have no outcome"
        for r, o in outcomes_of(f, writes):
            assert o[5] == 1, f"a write of {r['len']} B at {r['off']:#x} failed: {o}"
            write_times.append({"bytes": r["len"], "posted_cycles": r["t_cpl"] - r["t_req"],
                                "acked_cycles": r["t_cpl"] - r["t_req"] + o[6]})
        dut._log.info(f"{len(writes)} writes, every one acknowledged")
    f.model = [bytearray(image.mem[m]) for m in range(nm)]
    f.check_clean()                            # DRAM == image, no error counter moved
    ops = [{"op": o.op, "start_cycle": o.start_ps // cycle_ps, "end_cycle": o.end_ps // cycle_ps,
            "requests": o.requests} for o in client.ops]
    dut._log.info(f"{len(ops)} YCSB-{workload.upper()} operations, {client.requests} requests "
                  f"in {f.cycle} cycles; every read checked")
    path = env.get("EDM_YCSB_JSON")
    if path:
        with open(path, "w") as fh:
            json.dump({"cycles": f.cycle, "requests": client.requests, "ops": ops, "writes": write_times}, fh)
