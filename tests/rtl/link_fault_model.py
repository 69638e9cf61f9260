"""Reference model of the reconciliation sublayer's link fault signalling
(IEEE 802.3 Clause 46.3.4, figure 46-11) on a 64-bit XGMII, cycle by cycle:
what rtl/pcs/pcs_link_fault.sv must do. Words are (data, ctrl) with lane i in
data bits 8i+7:8i; column 0 is lanes 0..3, column 1 lanes 4..7."""

from __future__ import annotations

from edm import protocol

OK, LOCAL, REMOTE = 0, 1, 2
INIT, COUNT, FAULT = "init", "count", "fault"
IDLE_WORD = (int.from_bytes(bytes([protocol.XGMII_IDLE] * 8), "little"), 0xFF)


def fault_column(seq: int) -> int:
    """A four-lane column: /Q/ then the three data lanes `seq` (lane 1 lowest)."""
    return protocol.XGMII_SEQ | seq << 8


def fault_word(remote: bool) -> tuple[int, int]:
    """Both columns a fault sequence (what an RS sends while it signals)."""
    col = fault_column(protocol.SEQ_REMOTE_FAULT if remote else protocol.SEQ_LOCAL_FAULT)
    return col | col << 32, 0x11


def column_fault(word: tuple[int, int], c: int) -> int:
    """OK, LOCAL or REMOTE: the fault sequence column c of `word` is, if any."""
    data, ctrl = word
    col = data >> (32 * c) & 0xFFFF_FFFF
    if ctrl >> (4 * c) & 0xF != 1 or col & 0xFF != protocol.XGMII_SEQ:
        return OK
    return {protocol.SEQ_LOCAL_FAULT: LOCAL, protocol.SEQ_REMOTE_FAULT: REMOTE}.get(col >> 8, OK)


class LinkFaultModel:
    def __init__(self, columns: int = protocol.LINK_FAULT_COLUMNS, seqs: int = protocol.LINK_FAULT_SEQS):
        self.columns, self.seqs = columns, seqs
        self.state, self.link_fault, self.last, self.seq_cnt, self.col_cnt = INIT, OK, LOCAL, 0, 0
        self.mac_in_frame, self.passing = False, True
        self.cnt = {LOCAL: 0, REMOTE: 0}
        self.visited: set = set()   # (state, event) pairs seen, for the bench's coverage check

    def _column(self, fault: int | None) -> None:
        """One received column: None if none arrived, OK if it is no fault sequence."""
        if fault is None:
            return
        if fault != OK:
            self.col_cnt = 0
            if self.state == INIT or fault != self.last:
                self.visited.add((self.state, "new type" if self.state != INIT else "first"))
                self.state, self.last, self.seq_cnt = COUNT, fault, 1
            elif self.state == COUNT and self.seq_cnt < self.seqs - 1:
                self.seq_cnt += 1
            else:
                self.visited.add((self.state, "fault"))
                self.state, self.link_fault = FAULT, fault
        elif self.state != INIT:
            if self.col_cnt == self.columns - 1:
                self.visited.add((self.state, "window ends"))
                self.state, self.link_fault, self.col_cnt = INIT, OK, 0
            else:
                self.col_cnt += 1

    def outputs(self, tx_word: tuple[int, int], pcs_fault: bool) -> dict:
        """The combinational outputs this cycle, before the clock edge."""
        pass_ = self.link_fault == OK and (self.passing or not self.mac_in_frame)
        if pass_:
            tx = tx_word
        elif self.link_fault == LOCAL:
            tx = fault_word(remote=True)
        else:
            tx = IDLE_WORD
        return dict(tx=tx, link_fault=self.link_fault, link_up=pass_ and not pcs_fault, pass_=pass_,
                    cnt_local_fault=self.cnt[LOCAL], cnt_remote_fault=self.cnt[REMOTE])

    def clock(self, rx_valid: bool, rx_word: tuple[int, int], pcs_fault: bool, tx_valid: bool,
              tx_word: tuple[int, int]) -> None:
        """The clock edge: both received columns in order, then the transmit side."""
        pass_ = self.outputs(tx_word, pcs_fault)["pass_"]
        before = self.link_fault
        for c in range(2):
            self._column(LOCAL if pcs_fault else column_fault(rx_word, c) if rx_valid else None)
        if self.link_fault != before and self.link_fault != OK:
            self.cnt[self.link_fault] = min(self.cnt[self.link_fault] + 1, 0xFFFF)
        if tx_valid:
            data, ctrl = tx_word
            lanes = [(ctrl >> i & 1, data >> (8 * i) & 0xFF) for i in range(8)]
            start = lanes[0] == (1, protocol.XGMII_START) or lanes[4] == (1, protocol.XGMII_START)
            term = (1, protocol.XGMII_TERM) in lanes
            self.mac_in_frame = start or (self.mac_in_frame and not term)
        if tx_valid or before != OK:
            self.passing = pass_
