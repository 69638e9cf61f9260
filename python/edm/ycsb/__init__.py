"""A key-value store over the EDM fabric, driven by YCSB (the paper's §4.2.2,
Figures 6 and 7): generators (:mod:`edm.ycsb.generators`), workloads
(:mod:`edm.ycsb.workload`), the store and client (:mod:`edm.ycsb.store`), the
fabrics' wire and latency models (:mod:`edm.ycsb.models`), and the ``edm
ycsb`` command (:mod:`edm.ycsb.cli`). Design and numbers: docs/ycsb.md.
"""
