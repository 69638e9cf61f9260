// Constant-time ordered list (§3.1.2): shift-register insertion with parallel compare, 2-stage pipeline, one operation per cycle.
//
// DEPTH entries (valid, key, data) kept in positions 0..DEPTH-1, sorted by key
// ascending (smaller = better, e.g. SRPT remaining bytes), the valid ones
// packed at the front; among equal keys an entry that arrives (insert or
// update) goes behind the ones already there (stable), so position 0, a
// register, is always the best entry. The identifying field of an entry (for
// delete and update, compared in every position at once like a CAM) is the low
// ID_W bits of its data.
//
//   issue ──► stage 1 (cycle of issue)                 ──► stage 2 (next cycle)
//             every position: key <= op_key ? (ge)          every position loads
//             id == op id ?               (hit)             one of: itself, its
//             ... routed through the shift of the op        right neighbour (LEFT),
//             in stage 2 (s1_sel) so the compares are       its left neighbour
//             against the list after that op ──► s1_sel     (RIGHT) or the new
//             per position: KEEP/LEFT/RIGHT/NEW             entry (NEW): a 4:1 mux
//
// An operation issued in cycle t is in the entry registers from cycle t + 2
// (two clock edges); a new one may be issued every cycle. Back to back: in
// cycle t + 1 the entry registers do not yet hold operation t's effect (it is
// being written at the end of that cycle), so operation t+1's compare
// results are taken against the registers and against t's new entry, then
// moved by t's own per-position selects (s1_sel), exactly as the entries
// themselves will move: a position that will load its right neighbour takes
// the neighbour's result, the position that will load the new entry takes the
// result against t's key and id. No stall, no bypass of keys: only one
// 4:1 mux per compare bit between the comparators and stage 1's registers.
//
// Operations (op): none, insert (op_key, op_data), delete (the first entry,
// in list order, whose id is op_data's id), update (that entry removed and
// (op_key, op_data) inserted, in one operation: SRPT's grant decrements the
// granted entry's remaining bytes; the data is given again, so its other
// fields may change too). An insert while the list, after the operation in
// stage 2, is full (ins_ready low) is refused and res_refused pulses the next
// cycle; a delete or update whose id is in no entry does nothing and res_miss
// pulses the next cycle. Nothing is dropped silently.
//
// Reads, from registers: every entry (flattened, position 0 first) and the
// head. The first eligible entry: the caller computes a per-position mask
// (elig) from the entries' fields, e.g. "its source port is free"; a priority
// encoder gives the first valid eligible position and its entry
// (combinational: the caller registers it where its pipeline wants).
module edm_ordered_list #(
    parameter int unsigned DEPTH = 12,
    parameter int unsigned KEY_W = 16,
    parameter int unsigned DATA_W = 11,
    parameter int unsigned ID_W = 10       // the id: data[ID_W-1:0] (<= DATA_W)
) (
    input  logic                          clk,
    input  logic                          rst_n,
    // Operation, one per cycle: 0 none, 1 insert, 2 delete, 3 update.
    input  logic [1:0]                    op,
    input  logic [KEY_W-1:0]              op_key,     // insert, update
    input  logic [DATA_W-1:0]             op_data,    // insert, update; its id for delete
    // An insert issued now has a position (the list after the operation in
    // stage 2 is not full): the caller issues inserts only while it is high.
    output logic                          ins_ready,
    // The cycle after an operation: it did nothing (never silently).
    output logic                          res_refused,  // insert into a full list
    output logic                          res_miss,     // delete/update of an absent id
    // The list: position i's fields at [i*W +: W]; valid ones first, sorted.
    output logic [DEPTH-1:0]              e_valid,
    output logic [DEPTH*KEY_W-1:0]        e_key,
    output logic [DEPTH*DATA_W-1:0]       e_data,
    // The head (position 0), a register: the best entry.
    output logic                          head_valid,
    output logic [KEY_W-1:0]              head_key,
    output logic [DATA_W-1:0]             head_data,
    // First eligible: the first valid position whose elig bit is set.
    input  logic [DEPTH-1:0]              elig,
    output logic                          fe_valid,
    output logic [DEPTH-1:0]              fe_onehot,
    output logic [((DEPTH > 1) ? $clog2(DEPTH) : 1)-1:0] fe_pos,
    output logic [KEY_W-1:0]              fe_key,
    output logic [DATA_W-1:0]             fe_data
);
  localparam int unsigned PW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
  localparam logic [1:0] OP_INS = 2'd1, OP_DEL = 2'd2, OP_UPD = 2'd3;
  // Per position, what it loads at the end of stage 2.
  localparam logic [1:0] KEEP = 2'd0,    // itself
                         LEFT = 2'd1,    // position i+1 (an entry earlier it left)
                         RIGHT = 2'd2,   // position i-1 (an entry entered earlier it)
                         NEW = 2'd3;     // the operation's entry

  // ---------------------------------------------------------------- state
  logic [DEPTH-1:0]              a_valid;
  logic [DEPTH-1:0][KEY_W-1:0]   a_key;
  logic [DEPTH-1:0][DATA_W-1:0]  a_data;
  // Stage 1's registers: the operation's per-position selects and its entry.
  logic [DEPTH-1:0][1:0]         s1_sel;
  logic [KEY_W-1:0]              s1_key;
  logic [DATA_W-1:0]             s1_data;

  // Neighbours with guards: x_*[i + 1] is position i; x_*[0] and
  // x_*[DEPTH + 1] are the empty positions before and after the list.
  logic [DEPTH+1:0]              x_valid;
  logic [DEPTH+1:0][KEY_W-1:0]   x_key;
  logic [DEPTH+1:0][DATA_W-1:0]  x_data;

  always_comb begin
    x_valid = {1'b0, a_valid, 1'b0};
    x_key = {{KEY_W{1'b0}}, a_key, {KEY_W{1'b0}}};
    x_data = {{DATA_W{1'b0}}, a_data, {DATA_W{1'b0}}};
  end

  function automatic logic mux_bit(input logic [1:0] sel, input logic own, input logic right_nb,
                                   input logic left_nb, input logic new_bit);
    case (sel)
      KEEP: mux_bit = own;
      LEFT: mux_bit = right_nb;
      RIGHT: mux_bit = left_nb;
      default: mux_bit = new_bit;
    endcase
  endfunction

  // ---------------------------------------------------------------- stage 1
  // Compares against the registers (raw_*) and against the entry of the
  // operation in stage 2 (new_*), then moved by that operation's selects.
  logic [DEPTH+1:0] raw_ge, raw_hit;
  logic             new_ge, new_hit;
  logic [DEPTH:0]   ge;       // ge[i]: position i, after stage 2's operation, stays before op_key
  logic [DEPTH-1:0] hit;      // hit[i]: ... holds op_data's id
  logic             last_valid;  // position DEPTH-1 after stage 2's operation

  always_comb begin
    raw_ge = '0;
    raw_hit = '0;
    for (int i = 0; i < DEPTH; i++) begin
      raw_ge[i + 1] = a_valid[i] && a_key[i] <= op_key;   // stable: equal keys stay before
      raw_hit[i + 1] = a_valid[i] && a_data[i][ID_W-1:0] == op_data[ID_W-1:0];
    end
    new_ge = s1_key <= op_key;
    new_hit = s1_data[ID_W-1:0] == op_data[ID_W-1:0];
    ge = '0;   // ge[DEPTH]: the empty position after the list
    for (int i = 0; i < DEPTH; i++) begin
      ge[i] = mux_bit(s1_sel[i], raw_ge[i + 1], raw_ge[i + 2], raw_ge[i], new_ge);
      hit[i] = mux_bit(s1_sel[i], raw_hit[i + 1], raw_hit[i + 2], raw_hit[i], new_hit);
    end
    last_valid = mux_bit(s1_sel[DEPTH-1], x_valid[DEPTH], x_valid[DEPTH+1], x_valid[DEPTH-1], 1'b1);
  end

  assign ins_ready = !last_valid;

  // The operation's selects. An update is a removal (positions from the hit
  // on load their right neighbour: after) followed by an insert into the list
  // so shortened (ge_r: ge of that list); a delete is the removal alone, an
  // insert the insert alone (after all 0).
  logic             remove, found, refused, miss, act;
  logic [DEPTH-1:0] after;    // at or after the removed entry (the first hit)
  logic [DEPTH-1:0] ge_r;
  logic [DEPTH-1:0][1:0] sel;

  always_comb begin
    remove = op == OP_DEL || op == OP_UPD;
    found = |hit;
    refused = op == OP_INS && last_valid;
    miss = remove && !found;
    act = (op == OP_INS && !last_valid) || (remove && found);
    // Prefix OR of the hits in log2(DEPTH) levels (a chain would be DEPTH long).
    after = remove ? hit : '0;
    for (int s = 1; s < DEPTH; s = s * 2)
      after = after | (after << s);
    for (int i = 0; i < DEPTH; i++) begin
      ge_r[i] = (op == OP_DEL) || (after[i] ? ge[i + 1] : ge[i]);
      if (!act)
        sel[i] = KEEP;
      else if (ge_r[i])
        sel[i] = after[i] ? LEFT : KEEP;
      else if (i == 0 || ge_r[(i > 0) ? i - 1 : 0])
        sel[i] = NEW;
      else
        sel[i] = after[(i > 0) ? i - 1 : 0] ? KEEP : RIGHT;
    end
  end

  always_ff @(posedge clk) begin
    s1_key <= op_key;
    s1_data <= op_data;
    if (!rst_n) begin
      s1_sel <= '0;     // KEEP
      res_refused <= 1'b0;
      res_miss <= 1'b0;
    end else begin
      s1_sel <= sel;
      res_refused <= refused;
      res_miss <= miss;
    end
  end

  // ---------------------------------------------------------------- stage 2
  // Each position loads itself, a neighbour or the new entry.
  always_ff @(posedge clk)
    for (int i = 0; i < DEPTH; i++) begin
      case (s1_sel[i])
        LEFT: begin a_key[i] <= x_key[i + 2]; a_data[i] <= x_data[i + 2]; end
        RIGHT: begin a_key[i] <= x_key[i]; a_data[i] <= x_data[i]; end
        NEW: begin a_key[i] <= s1_key; a_data[i] <= s1_data; end
        default: ;
      endcase
      if (!rst_n)
        a_valid[i] <= 1'b0;
      else
        a_valid[i] <= mux_bit(s1_sel[i], x_valid[i + 1], x_valid[i + 2], x_valid[i], 1'b1);
    end

  // ---------------------------------------------------------------- reads
  assign e_valid = a_valid;
  assign e_key = a_key;
  assign e_data = a_data;
  assign head_valid = a_valid[0];
  assign head_key = a_key[0];
  assign head_data = a_data[0];

  // Priority encoder: the first valid eligible position (prefix OR of the
  // candidates before each position, log2(DEPTH) levels), its entry by AND-OR.
  logic [DEPTH-1:0] cand, earlier;
  always_comb begin
    cand = elig & a_valid;
    earlier = cand << 1;
    for (int s = 1; s < DEPTH; s = s * 2)
      earlier = earlier | (earlier << s);
    fe_onehot = cand & ~earlier;
    fe_valid = |cand;
    fe_pos = '0;
    fe_key = '0;
    fe_data = '0;
    for (int i = 0; i < DEPTH; i++)
      if (fe_onehot[i]) begin
        fe_pos = fe_pos | PW'(i);
        fe_key = fe_key | a_key[i];
        fe_data = fe_data | a_data[i];
      end
  end
endmodule
