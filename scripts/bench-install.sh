#!/usr/bin/env bash
# Import benchmark: one real large wheel, nvidia-cudnn-cu12 8.9.2.26
# (732 MB, 1.18 GB unpacked, largest member 617 MB), imported side by side by
#   cudnnm install            (archive SHA-256 + every file's SHA-256 + receipt)
#   sha256sum + unzip -q      (the manual way)
#   uv pip install --no-deps --target DIR, empty cache   (the named baseline)
# Prints wall time and peak RSS, median of $RUNS runs (default 5), warm page cache.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache="${CUDNNM_BENCH_CACHE:-$repo/.cache/bench}"
runs="${RUNS:-5}"
mkdir -p "$cache"
wheel=$(ls "$cache"/nvidia_cudnn_cu12-8.9.2.26-*.whl 2>/dev/null | head -1 || true)
if [ -z "$wheel" ]; then
  python3 -m pip download --quiet --no-deps --dest "$cache" nvidia-cudnn-cu12==8.9.2.26
  wheel=$(ls "$cache"/nvidia_cudnn_cu12-8.9.2.26-*.whl | head -1)
fi
command -v uv >/dev/null || python3 -m pip install --quiet uv
command -v unzip >/dev/null || { echo "unzip is needed (apt install unzip)" >&2; exit 1; }
(cd "$repo" && cargo build --release --quiet)
bin="$repo/target/release/cudnnm"
work=$(mktemp -d "${TMPDIR:-/tmp}/cudnnm-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# measure NAME CMD... : appends "seconds kilobytes" to $work/NAME
measure() {
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  cat "$work/t" >> "$work/$name"
}
cat "$wheel" > /dev/null   # warm the page cache once for everyone
for i in $(seq "$runs"); do
  rm -rf "$work/home" "$work/unz" "$work/uvt" "$work/uvcache"; sync
  measure cudnnm "$bin" --home "$work/home" -q install "$wheel"
  rm -rf "$work/home"; sync
  measure manual sh -c "sha256sum '$wheel' >/dev/null && unzip -q '$wheel' -d '$work/unz'"
  rm -rf "$work/unz"; sync
  measure uv uv pip install --quiet --no-deps --target "$work/uvt" --cache-dir "$work/uvcache" "$wheel"
  rm -rf "$work/uvt" "$work/uvcache"; sync
done

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
uv_t=$(cut -d' ' -f1 "$work/uv" | median)
printf '%s (%s runs, %s cores)\n' "$(basename "$wheel")" "$runs" "$(nproc)"
printf '%-28s %10s %12s %10s\n' tool "wall (s)" "peak RSS" "vs uv"
for n in cudnnm manual uv; do
  t=$(cut -d' ' -f1 "$work/$n" | median)
  m=$(cut -d' ' -f2 "$work/$n" | median)
  label=$n
  [ "$n" = cudnnm ] && label="cudnnm install"
  [ "$n" = manual ] && label="sha256sum + unzip -q"
  [ "$n" = uv ] && label="uv pip install --target"
  printf '%-28s %10.2f %9.0f MB %9.2fx\n' "$label" "$t" "$(echo "$m/1024" | bc -l)" "$(echo "$t/$uv_t" | bc -l)"
done
