// Reconciliation sublayer link state (IEEE 802.3 Clause 46.3.4, link fault
// signalling) on a 64-bit XGMII: two four-lane columns per word, column 0 in
// lanes 0..3, column 1 in lanes 4..7, taken in that order.
//
// Receive: a column is a fault sequence when it is /Q/ with the local or remote
// fault data (edm_pkg::SEQ_LOCAL_FAULT / SEQ_REMOTE_FAULT). The state machine
// is figure 46-11's, per column: INIT (link_fault OK) -> COUNT on a fault
// sequence; COUNT takes the LINK_FAULT_SEQS-th sequence of one type, each
// within COLUMNS columns of the one before, to FAULT (link_fault <= its
// type); a sequence of the other type starts the count again (NEW_TYPE,
// link_fault unchanged); COLUMNS columns without a fault sequence return to
// INIT. While pcs_fault is up (no block lock, hi_ber, the link guard's
// disable) every cycle counts as two local fault columns: what 802.3's PCS
// hands its RS then (49.2.13.2.3, RX_INIT). Cycles without rx_valid (memory
// blocks took the link) carry no column and move nothing.
//
// Transmit: link_fault OK passes the MAC's words; Local Fault sends remote
// fault sequences instead, Remote Fault idles (46.3.4.2). After a fault the
// MAC's words pass again only from a word outside a frame (no headless frame
// reaches the line). The mux is combinational: no cycle on a working link.
// link_up (OK, passing, and no pcs_fault) is what frames and EDM units wait for.
module pcs_link_fault #(
    parameter int unsigned COLUMNS = edm_pkg::LINK_FAULT_COLUMNS,
    parameter int unsigned SEQS = edm_pkg::LINK_FAULT_SEQS
) (
    input  logic        clk,
    input  logic        rst_n,
    // Receive: the decoder's words (rx_valid may have gaps) and the PCS's fault.
    input  logic        rx_valid,
    input  logic [63:0] rx_data,
    input  logic [7:0]  rx_ctrl,
    input  logic        pcs_fault,
    // Transmit: the MAC's words (tx_valid: a new word this cycle) toward the encoder.
    input  logic        tx_valid,
    input  logic [63:0] tx_in_data,
    input  logic [7:0]  tx_in_ctrl,
    output logic [63:0] tx_data,
    output logic [7:0]  tx_ctrl,
    // Link state: 0 OK, 1 local fault, 2 remote fault.
    output logic [1:0]  link_fault,
    output logic        link_up,
    // Status counters (16-bit, saturating): times link_fault became each fault.
    output logic [15:0] cnt_local_fault,
    output logic [15:0] cnt_remote_fault
);
  localparam logic [1:0] OK = 2'd0, LOCAL = 2'd1, REMOTE = 2'd2;
  localparam logic [1:0] S_INIT = 2'd0, S_COUNT = 2'd1, S_FAULT = 2'd2;
  localparam int unsigned CW = $clog2(COLUMNS);
  localparam int unsigned SW = $clog2(SEQS);
  localparam logic [31:0] RF_COLUMN = {edm_pkg::SEQ_REMOTE_FAULT, edm_pkg::XGMII_SEQ};
  localparam logic [63:0] IDLE_WORD = {8{edm_pkg::XGMII_IDLE}};

  logic [1:0]    state, n_state, n_fault;
  logic          last_remote, n_last;  // the type counted: remote (1) or local (0)
  logic [SW-1:0] seq_cnt, n_seq;       // sequences of that type counted (below SEQS)
  logic [CW-1:0] col_cnt, n_col;       // columns since the last fault sequence
  logic [1:0]    col_seen, col_fault, col_remote;

  // The received columns.
  always_comb
    for (int c = 0; c < 2; c++) begin
      col_seen[c] = pcs_fault || rx_valid;
      col_remote[c] = !pcs_fault && rx_data[32*c + 8 +: 24] == edm_pkg::SEQ_REMOTE_FAULT;
      col_fault[c] = pcs_fault || (rx_valid && rx_ctrl[4*c +: 4] == 4'b0001
                                   && rx_data[32*c +: 8] == edm_pkg::XGMII_SEQ
                                   && (rx_data[32*c + 8 +: 24] == edm_pkg::SEQ_LOCAL_FAULT
                                       || rx_data[32*c + 8 +: 24] == edm_pkg::SEQ_REMOTE_FAULT));
    end

  // Figure 46-11, column 0 then column 1.
  always_comb begin
    n_state = state;
    n_fault = link_fault;
    n_last = last_remote;
    n_seq = seq_cnt;
    n_col = col_cnt;
    for (int c = 0; c < 2; c++) begin
      if (col_fault[c]) begin
        n_col = '0;
        if (n_state == S_INIT || col_remote[c] != n_last) begin
          n_state = S_COUNT;  // the first of its type (from INIT, or NEW_TYPE)
          n_last = col_remote[c];
          n_seq = SW'(1);
        end else if (n_state == S_COUNT && 32'(n_seq) < SEQS - 1) begin
          n_seq = n_seq + 1'b1;
        end else begin
          n_state = S_FAULT;
          n_fault = col_remote[c] ? REMOTE : LOCAL;
        end
      end else if (col_seen[c] && n_state != S_INIT) begin
        if (32'(n_col) == COLUMNS - 1) begin
          n_state = S_INIT;
          n_fault = OK;
          n_col = '0;
        end else begin
          n_col = n_col + 1'b1;
        end
      end
    end
  end

  always_ff @(posedge clk)
    if (!rst_n) begin
      state <= S_INIT;
      link_fault <= OK;
      last_remote <= 1'b0;
      seq_cnt <= '0;
      col_cnt <= '0;
      cnt_local_fault <= '0;
      cnt_remote_fault <= '0;
    end else begin
      state <= n_state;
      link_fault <= n_fault;
      last_remote <= n_last;
      seq_cnt <= n_seq;
      col_cnt <= n_col;
      cnt_local_fault <= edm_pkg::sat_add(cnt_local_fault, {1'b0, n_fault == LOCAL && link_fault != LOCAL});
      cnt_remote_fault <= edm_pkg::sat_add(cnt_remote_fault, {1'b0, n_fault == REMOTE && link_fault != REMOTE});
    end

  // Transmit. mac_in_frame: the MAC is inside a frame before this word.
  logic mac_in_frame, passing, pass, has_start, has_term;
  always_comb begin
    has_start = (tx_in_ctrl[0] && tx_in_data[7:0] == edm_pkg::XGMII_START)
                || (tx_in_ctrl[4] && tx_in_data[39:32] == edm_pkg::XGMII_START);
    has_term = 1'b0;
    for (int i = 0; i < 8; i++) has_term |= tx_in_ctrl[i] && tx_in_data[8*i +: 8] == edm_pkg::XGMII_TERM;
  end
  assign pass = link_fault == OK && (passing || !mac_in_frame);
  always_ff @(posedge clk)
    if (!rst_n) begin
      mac_in_frame <= 1'b0;
      passing <= 1'b1;
    end else begin
      if (tx_valid) mac_in_frame <= has_start || (mac_in_frame && !has_term);
      if (tx_valid || link_fault != OK) passing <= pass;
    end

  always_comb begin
    tx_data = tx_in_data;
    tx_ctrl = tx_in_ctrl;
    if (!pass) begin
      tx_data = link_fault == LOCAL ? {RF_COLUMN, RF_COLUMN} : IDLE_WORD;
      tx_ctrl = link_fault == LOCAL ? 8'h11 : 8'hFF;
    end
  end

  assign link_up = pass && !pcs_fault;
endmodule
