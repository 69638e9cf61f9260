#!/usr/bin/env bash
# Renders a report in headless Chromium and saves a screenshot beside it, to be
# sure the HTML actually renders (installs Debian's chromium on first use).
#   scripts/screenshot_report.sh results/reproduce/report.html   -> report.png
set -euo pipefail
report=${1:?usage: $0 REPORT.html}
[ -f "$report" ] || { echo "screenshot: $report: no such file" >&2; exit 1; }
if ! command -v chromium >/dev/null 2>&1; then
  echo "[setup] apt-get install chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
png="${report%.html}.png"
rm -f "$png"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,4000 \
  --screenshot="$(realpath -m "$png")" "file://$(realpath "$report")" >/dev/null 2>&1
# A blank page compresses to almost nothing: demand a real picture.
size=$(stat -c %s "$png" 2>/dev/null || echo 0)
if [ "$size" -lt 50000 ]; then
  echo "screenshot: $png is missing or blank ($size bytes)" >&2
  exit 1
fi
echo "screenshot: $png ($size bytes)"
