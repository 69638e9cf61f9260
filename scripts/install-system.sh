#!/usr/bin/env bash
# Installs the system packages EDM needs on Debian 12 (idempotent; run as root).
# Called by `make` once; the stamp .build/system.stamp skips it afterwards.
set -euo pipefail
# ccache: the RTL tests compile Verilator's runtime once instead of once per model (tests/rtl/rtlsim.py).
# qflow-tech-osu018 + opensta: `edm rtl asic` (OSU 0.18 µm liberty, static timing with `sta`).
pkgs=(verilator iverilog g++ ccache make pkg-config python3 python3-venv python3-dev git qflow-tech-osu018 opensta)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  missing+=(cargo rustc)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "[setup] system packages present: verilator $(verilator --version | awk '{print $2}')"
