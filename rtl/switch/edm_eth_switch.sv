// The EDM switch with its Ethernet frame path: edm_switch (the memory
// datapath around the scheduler) hands every standard Ethernet block its
// ingress classifier finds (fr_valid/fr_block) to edm_l2_stage (whole frames
// per ingress, MAC learning, flooding, a frame queue per egress), and each
// egress merges the datapath's blocks with its frames in edm_switch_egress
// (the hosts' edm_tx, STRICT: memory preempts a frame between blocks, never
// splits a unit). The datapath is unchanged by frames: its blocks take the
// same cycles with or without them (cnt_conflict counts the same waits).
// docs/hardware.md "The frame path through the switch".
module edm_eth_switch #(
    parameter int unsigned N = 4,
    parameter int unsigned DEPTH = edm_pkg::DEFAULT_MAX_ACTIVE_NOTIFS * N,
    parameter bit          SRPT = 1'b1,
    parameter int unsigned CHUNK_BYTES = 64,
    parameter int unsigned CIRCUIT_TIMEOUT_CYCLES = 1024,
    parameter bit          ZERO_QUEUE = 1'b1,
    parameter int unsigned MAC_TABLE_SIZE = 16,
    parameter int unsigned L2_STORE_LOG2 = 11,   // ingress frame store, blocks
    parameter int unsigned L2_FRAMES_LOG2 = 5,   // committed frames per ingress store
    parameter int unsigned L2_QUEUE_LOG2 = 12    // egress frame queue, blocks
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [N*66-1:0]  in_block,
    input  logic [N-1:0]     port_link_up,   // each port's link state (edm_switch)
    output logic [N*66-1:0]  out_line,    // toward the links: memory and frames merged
    output logic [N*66-1:0]  edm_out,     // the datapath's own blocks (a probe)
    output logic [N*16-1:0]  cnt_bad_notif,
    output logic [N*16-1:0]  cnt_unknown,
    output logic [N*16-1:0]  cnt_non_edm,
    output logic [N*16-1:0]  cnt_dropped,
    output logic [15:0]      cnt_conflict,
    output logic [15:0]      cnt_overflow,
    output logic [N*16-1:0]  cnt_lost_grants,
    output logic [N*16-1:0]  cnt_rx_frames,
    output logic [N*16-1:0]  cnt_rx_dropped,
    output logic [N*16-1:0]  cnt_rx_bad,
    output logic [N*16-1:0]  cnt_ordered_sets,
    output logic [N*16-1:0]  cnt_filtered,
    output logic [N*16-1:0]  cnt_tx_frames,
    output logic [N*16-1:0]  cnt_tx_dropped
);
  logic [N-1:0]    fr_valid, l2_valid, l2_ready;
  logic [N*66-1:0] fr_block, l2_block;

  edm_switch #(.N(N), .DEPTH(DEPTH), .SRPT(SRPT), .CHUNK_BYTES(CHUNK_BYTES),
               .CIRCUIT_TIMEOUT_CYCLES(CIRCUIT_TIMEOUT_CYCLES), .ZERO_QUEUE(ZERO_QUEUE)) datapath (
      .clk, .rst_n, .in_block, .port_link_up, .out_block(edm_out),
      .cnt_bad_notif, .cnt_unknown, .cnt_non_edm, .cnt_dropped, .cnt_conflict, .cnt_overflow, .cnt_lost_grants,
      .fr_valid, .fr_block
  );

  /* verilator lint_off PINCONNECTEMPTY */
  edm_l2_stage #(.N(N), .TABLE_SIZE(MAC_TABLE_SIZE), .IB_LOG2(L2_STORE_LOG2), .FD_LOG2(L2_FRAMES_LOG2),
                 .EQ_LOG2(L2_QUEUE_LOG2)) l2 (
      .clk, .rst_n, .in_valid(fr_valid), .in_block(fr_block),
      .out_valid(l2_valid), .out_ready(l2_ready), .out_block(l2_block),
      .fwd_valid(), .fwd_port(), .fwd_want(), .fwd_mask(),
      .cnt_rx_frames, .cnt_rx_dropped, .cnt_rx_bad, .cnt_ordered_sets, .cnt_filtered, .cnt_tx_frames,
      .cnt_tx_dropped
  );
  /* verilator lint_on PINCONNECTEMPTY */

  // A port whose link is down takes no frame: its frames wait in its egress
  // queue (later ones are dropped there, counted, once it is full) and leave
  // when the link is back, rather than into a link that cannot carry them
  // (its RS sends fault blocks in their place). A frame the link loses in
  // the middle is lost as on any link: its rest follows when it is back.
  logic [N-1:0] eg_ready;
  for (genvar e = 0; e < N; e++) begin : g_egress
    edm_switch_egress egress (
        .clk, .rst_n, .edm_block(edm_out[e*66 +: 66]),
        .frame_valid(l2_valid[e] && port_link_up[e]), .frame_ready(eg_ready[e]),
        .frame_block(l2_block[e*66 +: 66]), .line_block(out_line[e*66 +: 66])
    );
  end
  assign l2_ready = eg_ready & port_link_up;
endmodule
