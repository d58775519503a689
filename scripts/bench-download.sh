#!/usr/bin/env bash
# Download benchmark: the real wheel nvidia-cudnn-cu12 8.9.2.26 (732 MB)
# served on 127.0.0.1 by scripts/throttle-server.py at a fixed bandwidth
# ($CUDNNM_BENCH_MBPS megabytes a second, default 50), fetched side by side by
#   curl -o FILE                 (the file alone: the time to beat)
#   cudnnm install 8.9.2.26      (empty home and cache: download, SHA-256,
#                                 unpack while downloading, every file's
#                                 SHA-256, receipt, commit)
#   cudnnm install, before       (optional: CUDNNM_BENCH_BEFORE=/path/to/an/older/cudnnm)
# cudnnm finds the wheel through a catalog entry written into each fresh home
# (`catalog.toml`: its URL on the local server and its SHA-256). The tools
# take turns within each run, so a shared machine's load hits them alike.
# Prints wall time, CPU time (user+sys), peak RSS and the ratio to curl,
# median of $RUNS runs (default 5), and the load average before and after.
# CUDNNM_BENCH_BIN=/path/to/cudnnm skips the release build;
# CUDNNM_BENCH_CACHE is the folder holding (or receiving) the wheel.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache="${CUDNNM_BENCH_CACHE:-$repo/.cache/bench}"
runs="${RUNS:-5}"
mbps="${CUDNNM_BENCH_MBPS:-50}"
. "$repo/scripts/bench-lib.sh"
wheel=$(bench_wheel "$cache")
command -v curl >/dev/null || { echo "curl is needed (apt install curl)" >&2; exit 1; }
bin=$(bench_bin "$repo")
before="${CUDNNM_BENCH_BEFORE:-}"
work=$(mktemp -d "${TMPDIR:-/tmp}/cudnnm-bench-dl.XXXXXX")
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

name=$(basename "$wheel")
size=$(stat -c %s "$wheel")
sha=$(sha256sum "$wheel" | cut -d' ' -f1)
python3 "$repo/scripts/throttle-server.py" "$wheel" --mbps "$mbps" --port-file "$work/port" >/dev/null &
server=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
url="http://127.0.0.1:$port/$name"

# A fresh home whose catalog lists the wheel on the local server.
fresh_home() {
  rm -rf "$work/home" "$work/dl"; sync
  mkdir -p "$work/home"
  cat > "$work/home/catalog.toml" <<EOF
schema = 1
[[archive]]
version = "8.9.2.26"
cuda = "12"
platform = "linux-x86_64"
path = "$url"
size = $size
source = "scripts/bench-download.sh: the PyPI wheel on a local server"
hashes = [{ sha256 = "$sha", source = "sha256sum of $name" }]
EOF
}
# The install is real: the receipt names the wheel's SHA-256, and the largest
# library's recorded hash is its content's.
check_install() {
  local r
  r=$(ls "$work"/home/store/cuda-12/8.9.2.26/receipt.toml)
  grep -q "^sha256 = \"$sha\"" "$r" || { echo "receipt $r: not the wheel's SHA-256" >&2; exit 1; }
  check_largest "$r"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cat "$wheel" > /dev/null   # the server reads from a warm page cache
names="curl cudnnm"
[ -n "$before" ] && names="$names before"
for i in $(seq "$runs"); do
  for n in $names; do
    fresh_home
    case $n in
      curl)
        measure curl curl -sS --fail -o "$work/dl" "$url"
        [ "$(stat -c %s "$work/dl")" = "$size" ] || { echo "curl: short download" >&2; exit 1; } ;;
      cudnnm) measure cudnnm "$bin" --home "$work/home" -q install 8.9.2.26 --cuda 12 --platform linux-x86_64; check_install ;;
      before) measure before "$before" --home "$work/home" -q install 8.9.2.26 --cuda 12 --platform linux-x86_64; check_install ;;
    esac
  done
done
rm -rf "$work/home" "$work/dl"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

base=$(cut -d' ' -f1 "$work/curl" | median)
printf '%s at %s MB/s from 127.0.0.1 (%s runs, %s cores, load average %s before, %s after)\n' \
  "$name" "$mbps" "$runs" "$(nproc)" "$load_before" "$load_after"
printf '%-34s %9s %9s %10s %9s\n' tool "wall (s)" "CPU (s)" "peak RSS" "vs curl"
for n in $names; do
  case $n in
    curl) label="curl -o FILE (download alone)" ;;
    cudnnm) label="cudnnm install 8.9.2.26" ;;
    before) label="cudnnm install 8.9.2.26 (before)" ;;
  esac
  row "$label" "$n" "$base"
done
