#!/usr/bin/env bash
# Benchmark of switching: `cudnnm use` between two installed
# releases of the real nvidia-cudnn-cu12 wheels, 8.9.2.26 (1.18 GB of
# libraries) and 9.1.0.70, in symlink, hardlink and copy mode, against the
# manual way (`rm` the toolkit's cuDNN files, `cp -P` the other set from a
# backup folder). Every switch is timed whole-process (fork to exit) and
# alternates direction; the table shows the median, min and max in ms.
# Link modes should stay within 20 ms whatever the release size (a row with
# the small nvidia-cudnn-jit-cu12 wheels shows that); copy mode within 1.2x
# of `cp`.
#
# Two runs of every method: "settled" runs `sync` (untimed) before each
# switch, as when switches are minutes apart; "back to back" does not, which
# favours `rm` + `cp`: `rm` discards the previous copy's pages before they
# are ever written back, while cudnnm's journal flush can wait behind the
# kernel writing back those same pages.
#
# Downloads what it needs into $CUDNNM_BENCH_CACHE (default .cache/bench in the
# repository) with pip, once. Needs cargo, python3 + pip, ~6 GB of disk in
# $BENCH_TMP (default target/, on the same volume as the sandbox home so hard
# links work). ROUNDS=N switches per method (default 9).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
cache="${CUDNNM_BENCH_CACHE:-$repo/.cache/bench}"
rounds="${ROUNDS:-9}"
mkdir -p "$cache"

fetch() { # fetch REQUIREMENT FILE-GLOB: the cached wheel, downloaded once
  if ! compgen -G "$cache/$2" >/dev/null; then
    echo "== downloading $1 into $cache" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$cache" "$1" >&2
  fi
  compgen -G "$cache/$2" | head -n1
}
big_a=$(fetch nvidia-cudnn-cu12==8.9.2.26 'nvidia_cudnn_cu12-8.9.2.26-*.whl')
big_b=$(fetch nvidia-cudnn-cu12==9.1.0.70 'nvidia_cudnn_cu12-9.1.0.70-*.whl')
small_dir="${CUDNNM_TEST_WHEELS:-$repo/.cache/wheels}"
small_a=$(compgen -G "$small_dir/nvidia_cudnn_jit_cu12-9.12.0.46-*.whl" | head -n1 || true)
small_b=$(compgen -G "$small_dir/nvidia_cudnn_jit_cu12-9.27.0.42-*.whl" | head -n1 || true)

cargo build --release --quiet
cudnnm="$repo/target/release/cudnnm"
mkdir -p "${BENCH_TMP:-$repo/target}"
work=$(mktemp -d "${BENCH_TMP:-$repo/target}/bench-use.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export CUDNNM_HOME="$work/home"

toolkit() { # a CUDA 12.4 toolkit folder in the Linux layout
  mkdir -p "$1/targets/x86_64-linux/lib" "$1/targets/x86_64-linux/include"
  ln -s targets/x86_64-linux/lib "$1/lib64"
  ln -s targets/x86_64-linux/include "$1/include"
  printf '{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}\n' >"$1/version.json"
}

echo "== importing the releases (not timed)"
for w in "$big_a" "$big_b" ${small_a:+"$small_a"} ${small_b:+"$small_b"}; do
  "$cudnnm" -q install "$w"
done
"$cudnnm" list

now_ms() { echo "${EPOCHREALTIME/./}"; } # microseconds
stats() { # stats < microsecond samples: median min max in ms
  sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f %.1f %.1f", m/1000, a[1]/1000, a[NR]/1000}'
}

results=()
settle() { if [ "$settled" = 1 ]; then sync; fi; }

bench_use() { # bench_use LABEL MODE A B
  local label=$1 mode=$2 a=$3 b=$4 tk="$work/tk-$1" samples="" t0 t1 v
  toolkit "$tk"
  "$cudnnm" -q use "$a" --cuda-root "$tk" --mode "$mode"
  for i in $(seq 1 "$rounds"); do
    if ((i % 2)); then v=$b; else v=$a; fi
    settle
    t0=$(now_ms)
    "$cudnnm" -q use "$v" --cuda-root "$tk" --mode "$mode"
    t1=$(now_ms)
    samples+="$((t1 - t0))"$'\n'
  done
  results+=("$label|$(printf %s "$samples" | stats)")
  rm -rf "$tk"
}

bench_manual() { # bench_manual LABEL A-ID B-ID: rm + cp -P from backup folders
  local label=$1 tk="$work/tk-$1" samples="" t0 t1 set
  toolkit "$tk"
  for id in "$2" "$3"; do # the "backup folders": each release's files in toolkit layout
    local rel="$CUDNNM_HOME/store/cuda-12/$id"
    mkdir -p "$work/manual/$id/include" "$work/manual/$id/lib64"
    cp -P "$rel"/include/cudnn* "$work/manual/$id/include/"
    cp -P "$rel"/lib/libcudnn* "$work/manual/$id/lib64/"
  done
  cp -P "$work/manual/$2"/include/* "$tk/include/"
  cp -P "$work/manual/$2"/lib64/* "$tk/lib64/"
  sync
  for i in $(seq 1 "$rounds"); do
    if ((i % 2)); then set="$work/manual/$3"; else set="$work/manual/$2"; fi
    settle
    t0=$(now_ms)
    sh -c 'rm -f "$1"/include/cudnn* "$1"/lib64/libcudnn* && cp -P "$2"/include/* "$1/include/" && cp -P "$2"/lib64/* "$1/lib64/"' sh "$tk" "$set"
    t1=$(now_ms)
    samples+="$((t1 - t0))"$'\n'
  done
  results+=("$label|$(printf %s "$samples" | stats)")
  rm -rf "$tk" "$work/manual"
}

run_all() {
  results=()
  echo "== $1: load before $(cut -d' ' -f1-3 /proc/loadavg)"
  bench_use "use --mode symlink" symlink 8.9.2.26 9.1.0.70
  bench_use "use --mode hardlink" hardlink 8.9.2.26 9.1.0.70
  if [ -n "$small_a" ] && [ -n "$small_b" ]; then
    bench_use "use --mode symlink (small jit wheels)" symlink 9.12.0.46 9.27.0.42
    bench_use "use --mode hardlink (small jit wheels)" hardlink 9.12.0.46 9.27.0.42
  fi
  bench_use "use --mode copy" copy 8.9.2.26 9.1.0.70
  bench_manual "manual rm + cp -P" 8.9.2.26 9.1.0.70
  echo "== $1: load after $(cut -d' ' -f1-3 /proc/loadavg)"
  tables+=("$1" "$(table)")
}

table() {
  printf '| %-40s | %10s | %8s | %8s |\n' method "median ms" "min ms" "max ms"
  printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..10})"
  for r in "${results[@]}"; do
    IFS='|' read -r label st <<<"$r"
    read -r med min max <<<"$st"
    printf '| %-40s | %10s | %8s | %8s |\n' "$label" "$med" "$min" "$max"
  done
  local cp_med copy_med
  cp_med=$(printf '%s\n' "${results[@]}" | awk -F'|' '/^manual/ {split($2, a, " "); print a[1]}')
  copy_med=$(printf '%s\n' "${results[@]}" | awk -F'|' '/^use --mode copy/ {split($2, a, " "); print a[1]}')
  echo "copy mode / manual (medians): $(awk -v a="$copy_med" -v b="$cp_med" 'BEGIN {printf "%.2f", a / b}')"
}

tables=()
settled=1
run_all "settled (sync before each switch)"
settled=0
run_all "back to back"

size() { du -sh --apparent-size "$CUDNNM_HOME/store/cuda-12/$1/lib" | cut -f1; }
echo
echo "switching 8.9.2.26 ($(size 8.9.2.26) of libraries) <-> 9.1.0.70 ($(size 9.1.0.70)), $rounds switches per method, each timed whole-process:"
for ((k = 0; k < ${#tables[@]}; k += 2)); do
  echo
  echo "${tables[k]}:"
  echo "${tables[k + 1]}"
done
