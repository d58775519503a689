#!/usr/bin/env bash
# Index benchmark (issue 27): installing a cuDNN release by version from a
# package index. The real wheel nvidia-cudnn-cu12 8.9.2.26 (732 MB) is served
# on 127.0.0.1 by scripts/throttle-server.py --index, a one-project simple-API
# index (PEP 691 JSON / PEP 503 HTML) whose file is paced at a fixed bandwidth,
# at each rate of $CUDNNM_BENCH_MBPS_LIST (megabytes a second, default
# "50 150"), and fetched side by side by
#   curl -o FILE                  (the file alone, its URL known: the time to beat)
#   cudnnm install 8.9.2.26 --cuda 12 --index-url URL
#                                 (cudnnm reads the index itself: the page, then
#                                 the wheel, unpacked while it downloads)
#   cudnnm install pip:nvidia-cudnn-cu12==8.9.2.26
#                                 (today's route: pip downloads the wheel from
#                                 PIP_INDEX_URL, then cudnnm imports it)
#   uv pip install --no-deps --target DIR nvidia-cudnn-cu12==8.9.2.26 --index-url URL
# each with an empty home / cache (cudnnm's home, pip's and uv's cache). The
# goal: cudnnm direct within 1.1x curl's wall time at 50 and 150 MB/s, peak
# RSS at most 64 MB. The tools take turns within each run, so a shared
# machine's load hits them alike. Prints, for each rate, wall time, CPU time
# (user+sys) and peak RSS (the largest process of the tool's tree: pip for
# the pip route) and the ratio to curl, median of $RUNS runs (default 3),
# the machine's cores, the load average before and after, and the requests
# the server saw for one cudnnm direct install.
# Every install is checked (the receipt names the wheel's SHA-256 and the
# largest library's hash is its content's; uv's library is there), and every
# cudnnm direct run must have asked the server for the project page and the
# wheel and nothing else: a failed or rerouted run stops the benchmark.
# Nothing may leave the machine: pip's own settings (PIP_*, pip.conf) and
# uv's are set aside, and an HTTP(S) proxy that does not exist is set for
# everything but 127.0.0.1.
# CUDNNM_BENCH_TOOLS picks rows (default "curl cudnnm pip uv"; curl is the
# ratio's base and always kept); CUDNNM_BENCH_BIN=/path/to/cudnnm skips the
# release build; CUDNNM_BENCH_CACHE is the folder holding (or receiving) the wheel.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache="${CUDNNM_BENCH_CACHE:-$repo/.cache/bench}"
runs="${RUNS:-3}"
rates="${CUDNNM_BENCH_MBPS_LIST:-50 150}"
tools="${CUDNNM_BENCH_TOOLS:-curl cudnnm pip uv}"
project=nvidia-cudnn-cu12
. "$repo/scripts/bench-lib.sh"
wheel=$(bench_wheel "$cache")
command -v curl >/dev/null || { echo "curl is needed (apt install curl)" >&2; exit 1; }
python3 -m pip --version >/dev/null 2>&1 || { echo "python3 -m pip is needed (apt install python3-pip)" >&2; exit 1; }
command -v uv >/dev/null || python3 -m pip install --quiet uv
bin=$(bench_bin "$repo")
work=$(mktemp -d "${TMPDIR:-/tmp}/cudnnm-bench-index.XXXXXX")
server=""
stop_server() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  server=""
}
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT

case " $tools " in *" curl "*) ;; *) tools="curl $tools" ;; esac
# pip and uv see only the loopback index; nothing reaches the network.
for v in $(compgen -e | grep -E '^(PIP|UV|CUDNNM)_' || true); do unset "$v"; done
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 UV_NO_CONFIG=1
export http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
unset ALL_PROXY all_proxy

name=$(basename "$wheel")
size=$(stat -c %s "$wheel")
sha=$(sha256sum "$wheel" | cut -d' ' -f1)

# start_server MBPS: the index on a free port, paced at MBPS; sets $port.
start_server() {
  rm -f "$work/port" "$work/log"
  python3 "$repo/scripts/throttle-server.py" "$wheel" --mbps "$1" --index "$project" \
    --log "$work/log" --port-file "$work/port" >/dev/null &
  server=$!
  # (it hashes the wheel before it listens)
  for _ in $(seq 600); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || { echo "throttle-server.py did not start" >&2; exit 1; }
  port=$(cat "$work/port")
}

fresh() {
  rm -rf "$work/home" "$work/dl" "$work/pipcache" "$work/uvt" "$work/uvcache"; sync
  mkdir -p "$work/home" "$work/pipcache"
  : > "$work/log"
}
# The install is real: the receipt names the wheel's SHA-256, and the largest
# library's recorded hash is its content's.
check_install() {
  local r
  r=$(ls "$work"/home/store/cuda-12/8.9.2.26/receipt.toml) || { echo "$1: no receipt for 8.9.2.26 (CUDA 12)" >&2; exit 1; }
  grep -q "^sha256 = \"$sha\"" "$r" || { echo "$1: receipt $r does not name the wheel's SHA-256" >&2; exit 1; }
  check_largest "$r"
}
# check_asked TOOL: the server saw TOOL fetch the wheel from the index (the
# project page, then the file); for cudnnm direct, nothing else.
check_asked() {
  grep -q "^GET /simple/$project/\?\$" "$work/log" && grep -q "^GET /files/$name\$" "$work/log" \
    || { echo "$1: the server did not see the index page and the wheel asked for; it saw:" >&2; cat "$work/log" >&2; exit 1; }
  if [ "$1" = cudnnm ] && [ "$(wc -l < "$work/log")" != 2 ]; then
    echo "cudnnm: asked more than the page and the wheel:" >&2; cat "$work/log" >&2; exit 1
  fi
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cat "$wheel" > /dev/null   # the server reads from a warm page cache
for mbps in $rates; do
  start_server "$mbps"
  index="http://127.0.0.1:$port/simple/"
  for i in $(seq "$runs"); do
    for t in $tools; do
      fresh
      case $t in
        curl)
          measure "$t-$mbps" curl -sS --fail -o "$work/dl" "http://127.0.0.1:$port/files/$name"
          [ "$(stat -c %s "$work/dl")" = "$size" ] || { echo "curl: short download" >&2; exit 1; } ;;
        cudnnm)
          measure "$t-$mbps" "$bin" --home "$work/home" -q install 8.9.2.26 --cuda 12 --index-url "$index"
          check_install cudnnm; check_asked cudnnm
          [ -s "$work/asked" ] || { echo "$mbps MB/s:"; sed 's/^/  /' "$work/log"; } > "$work/asked" ;;
        pip)
          measure "$t-$mbps" env PIP_INDEX_URL="$index" PIP_CACHE_DIR="$work/pipcache" \
            "$bin" --home "$work/home" -q install "pip:$project==8.9.2.26"
          check_install "cudnnm install pip:"; check_asked pip ;;
        uv)
          measure "$t-$mbps" uv pip install --quiet --no-deps --target "$work/uvt" --cache-dir "$work/uvcache" \
            --index-url "$index" "$project==8.9.2.26"
          [ -f "$work/uvt/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8" ] || { echo "uv: nothing installed" >&2; exit 1; }
          check_asked uv ;;
      esac
    done
  done
  stop_server
done
rm -rf "$work/home" "$work/dl" "$work/pipcache" "$work/uvt" "$work/uvcache"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

printf '%s from a loopback index (%s runs, %s cores, load average %s before, %s after)\n' \
  "$name" "$runs" "$(nproc)" "$load_before" "$load_after"
printf '%-6s %-34s %9s %9s %10s %9s\n' MB/s tool "wall (s)" "CPU (s)" "peak RSS" "vs curl"
for mbps in $rates; do
  base=$(cut -d' ' -f1 "$work/curl-$mbps" | median)
  for t in $tools; do
    case $t in
      curl) label="curl -o FILE (the file alone)" ;;
      cudnnm) label="cudnnm install --index-url" ;;
      pip) label="cudnnm install pip:... (via pip)" ;;
      uv) label="uv pip install --target" ;;
    esac
    printf '%-6s ' "$mbps"
    row "$label" "$t-$mbps" "$base"
  done
done
if [ -s "$work/asked" ]; then
  echo "requests one cudnnm install --index-url made:"
  cat "$work/asked"
fi
