"""EDM: an ultra-low-latency Ethernet fabric for memory disaggregation.

Subpackages: :mod:`edm.protocol` (wire constants, from the Rust core),
:mod:`edm.cli` (the ``edm`` command).
"""

__all__ = ["protocol"]
