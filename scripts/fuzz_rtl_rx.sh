#!/bin/sh
# The RTL receive-path fuzzer (docs/faults.md §3): the reference codec writes
# structure-biased traffic with faults and its own receiver's results
# (crates/edm-proto/examples/rx_vectors.rs); a Verilator model of block lock,
# descrambler, edm_rx and decoder (tests/rtl/fuzz_rx_top.sv) checks every
# block against them (tests/rtl/fuzz_rx_main.cpp) and prints its figures.
#
#   scripts/fuzz_rtl_rx.sh [blocks] [seed] [fault rate] [line error rate] [segment]
#
# Defaults: 10^7 checked blocks, seed 1, a sender fault on one block in 1000,
# a line bit error in one block in 10^4, segments of 20000 blocks (each starts
# with the block boundary moved and 1000 idles). Exit status 1 on a mismatch.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BLOCKS=${1:-10000000}
SEED=${2:-1}
FAULT_RATE=${3:-0.001}
LINE_ERROR_RATE=${4:-0.0001}
SEGMENT=${5:-20000}
BUILD=${FUZZ_BUILD:-$ROOT/.build/fuzz_rtl_rx}

mkdir -p "$BUILD"
cargo build --release -q --manifest-path "$ROOT/Cargo.toml" -p edm-proto --example rx_vectors
# The user's ccache, shared by every checkout (as tests/rtl/rtlsim.py's compiler_cache):
# the RTL goes in relative to the checkout, so the model's C++ is the same in each.
if command -v ccache >/dev/null 2>&1; then
  export OBJCACHE=ccache CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1
fi
(cd "$ROOT" && verilator --cc --exe --build -j 2 -O3 --x-assign fast -CFLAGS -O2 --Mdir "$BUILD" -o fuzz_rx \
  --top-module fuzz_rx_top \
  rtl/common/edm_pkg.sv rtl/common/edm_crc32c_unit.sv rtl/host/edm_rx.sv \
  rtl/pcs/pcs_codec_pkg.sv rtl/pcs/pcs_decoder.sv rtl/pcs/pcs_block_lock.sv \
  rtl/pcs/pcs_scrambler.sv rtl/pcs/pcs_ber_monitor.sv \
  tests/rtl/fuzz_rx_top.sv "$ROOT/tests/rtl/fuzz_rx_main.cpp") >"$BUILD/build.log" 2>&1 \
  || { cat "$BUILD/build.log" >&2; exit 1; }
TARGET=$(cargo metadata --format-version 1 --no-deps --manifest-path "$ROOT/Cargo.toml" \
  | sed 's/.*"target_directory":"\([^"]*\)".*/\1/')
"$TARGET/release/examples/rx_vectors" "$BLOCKS" "$SEED" "$FAULT_RATE" "$LINE_ERROR_RATE" "$SEGMENT" \
  | "$BUILD/fuzz_rx"
