#!/usr/bin/env bash
# Import benchmark: one real large wheel, nvidia-cudnn-cu12 8.9.2.26
# (732 MB, 1.18 GB unpacked, largest member 617 MiB), imported side by side by
#   cudnnm install            (archive SHA-256, CRC-32 of every member, receipt with every
#                             file's SHA-256: from the wheel's RECORD, as PyPI publishes
#                             the wheel's SHA-256 and the catalog records it)
#   cudnnm install, before    (optional: CUDNNM_BENCH_BEFORE=/path/to/an/older/cudnnm)
#   uv pip install --no-deps --target DIR, empty cache   (the named baseline)
#   sha256sum + unzip -q      (the manual way; MANUAL=0 leaves it out)
# The tools run alternately within each run, so a shared machine's load hits
# them alike. Prints wall time, CPU time (user+sys) and peak RSS, median of
# $RUNS runs (default 5), warm page cache, and the load average before and after.
# CUDNNM_BENCH_BIN=/path/to/cudnnm skips the release build.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache="${CUDNNM_BENCH_CACHE:-$repo/.cache/bench}"
runs="${RUNS:-5}"
manual="${MANUAL:-1}"
. "$repo/scripts/bench-lib.sh"
wheel=$(bench_wheel "$cache")
command -v uv >/dev/null || python3 -m pip install --quiet uv
[ "$manual" = 0 ] || command -v unzip >/dev/null || { echo "unzip is needed (apt install unzip)" >&2; exit 1; }
bin=$(bench_bin "$repo")
before="${CUDNNM_BENCH_BEFORE:-}"
work=$(mktemp -d "${TMPDIR:-/tmp}/cudnnm-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# every file of the receipt carries a SHA-256 (links carry a target and size 0 instead)
check_receipt() {
  local r
  r=$(ls "$work"/home/store/cuda-*/*/receipt.toml)
  local files hashes links
  files=$(grep -c '^size = ' "$r" || true)
  links=$(grep -c '^link = ' "$r" || true)
  files=$((files - links))
  hashes=$(grep -c '^sha256 = ' "$r" || true)
  # (the source's own size and sha256 are one more pair)
  [ "$files" -ge 20 ] && [ "$files" = "$hashes" ] || { echo "receipt $r: $files sizes, $hashes hashes" >&2; exit 1; }
  # and the largest library's recorded hash is its content's (every file's, after the first run)
  check_largest "$r"
  [ "$i" != 1 ] || check_every "$r"
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cat "$wheel" > /dev/null   # warm the page cache once for everyone
names="cudnnm"
[ -n "$before" ] && names="$names before"
names="$names uv"
[ "$manual" = 0 ] || names="$names manual"
for i in $(seq "$runs"); do
  for n in $names; do
    rm -rf "$work/home" "$work/unz" "$work/uvt" "$work/uvcache"; sync
    case $n in
      cudnnm) measure cudnnm "$bin" --home "$work/home" -q install "$wheel"; check_receipt ;;
      before) measure before "$before" --home "$work/home" -q install "$wheel"; check_receipt ;;
      uv) measure uv uv pip install --quiet --no-deps --target "$work/uvt" --cache-dir "$work/uvcache" "$wheel" ;;
      manual) measure manual sh -c "sha256sum '$wheel' >/dev/null && unzip -q '$wheel' -d '$work/unz'" ;;
    esac
  done
done
rm -rf "$work/home" "$work/unz" "$work/uvt" "$work/uvcache"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

uv_t=$(cut -d' ' -f1 "$work/uv" | median)
printf '%s (%s runs, %s cores, load average %s before, %s after)\n' \
  "$(basename "$wheel")" "$runs" "$(nproc)" "$load_before" "$load_after"
printf '%-34s %9s %9s %10s %9s\n' tool "wall (s)" "CPU (s)" "peak RSS" "vs uv"
for n in $names; do
  case $n in
    cudnnm) label="cudnnm install" ;;
    before) label="cudnnm install (before)" ;;
    uv) label="uv pip install --target" ;;
    manual) label="sha256sum + unzip -q" ;;
  esac
  row "$label" "$n" "$uv_t"
done
