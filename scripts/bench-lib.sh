# Shared by the bench-*.sh scripts (sourced, not run): the benchmark wheel
# and the binary under test, timing a command, the median of a column, and
# reading a hash back from a receipt. The timing helpers need $work, a
# scratch folder of the calling script.

# bench_wheel CACHE: prints the path of the real nvidia-cudnn-cu12 8.9.2.26
# wheel (732 MB) in CACHE, fetching it with pip the first time.
bench_wheel() {
  local cache=$1 w
  mkdir -p "$cache"
  w=$(ls "$cache"/nvidia_cudnn_cu12-8.9.2.26-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$w" ]; then
    python3 -m pip download --quiet --no-deps --dest "$cache" nvidia-cudnn-cu12==8.9.2.26 >&2 || return 1
    w=$(ls "$cache"/nvidia_cudnn_cu12-8.9.2.26-*.whl | head -1)
  fi
  [ -n "$w" ] && echo "$w"
}

# bench_bin REPO: prints the cudnnm to time: $CUDNNM_BENCH_BIN, else a
# release build of REPO (built now).
bench_bin() {
  if [ -n "${CUDNNM_BENCH_BIN:-}" ]; then
    echo "$CUDNNM_BENCH_BIN"
  else
    (cd "$1" && cargo build --release --quiet) >&2 || return 1
    echo "$1/target/release/cudnnm"
  fi
}

# measure NAME CMD... : runs CMD under /usr/bin/time and appends
# "wall user sys kilobytes" to $work/NAME; stops the benchmark on failure.
measure() {
  local name=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  cat "$work/t" >> "$work/$name"
}

# median: the median of the numbers on stdin, one a line.
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# receipt_sha RECEIPT PATH: the SHA-256 the receipt records for the file PATH.
receipt_sha() {
  awk -v want="path = \"$2\"" '
    /^\[\[file\]\]/ { inside = 0 }
    $0 == want { inside = 1 }
    inside && /^sha256 = / { gsub(/^sha256 = "|"$/, ""); print; exit }
  ' "$1"
}

# check_largest RECEIPT: the largest library of nvidia-cudnn-cu12 8.9.2.26
# is recorded with the hash of what is on disk.
check_largest() {
  local r=$1 big="libcudnn_cnn_infer.so.8" want got
  want=$(receipt_sha "$r" "lib/$big")
  got=$(sha256sum "$(dirname "$r")/lib/$big" | cut -d' ' -f1)
  [ -n "$want" ] && [ "$want" = "$got" ] || { echo "receipt $r: $big recorded as '$want', is $got" >&2; exit 1; }
}

# check_every RECEIPT: every file the receipt records with a SHA-256 holds
# those bytes on disk (cudnnm takes a published wheel's from its RECORD).
check_every() {
  local r=$1 dir want got p n=0
  dir=$(dirname "$r")
  while read -r p; do
    want=$(receipt_sha "$r" "$p")
    [ -n "$want" ] || continue
    got=$(sha256sum "$dir/$p" | cut -d' ' -f1)
    [ "$want" = "$got" ] || { echo "receipt $r: $p recorded as '$want', is $got" >&2; exit 1; }
    n=$((n + 1))
  done < <(sed -n 's/^path = "\(.*\)"$/\1/p' "$r")
  [ "$n" -ge 20 ] || { echo "receipt $r: only $n files hashed" >&2; exit 1; }
}

# row LABEL NAME BASE: one table row of $work/NAME's medians, its wall time
# as a ratio of BASE seconds.
row() {
  local t c m
  t=$(cut -d' ' -f1 "$work/$2" | median)
  c=$(awk '{print $2 + $3}' "$work/$2" | median)
  m=$(cut -d' ' -f4 "$work/$2" | median)
  printf '%-34s %9.2f %9.2f %7.0f MB %8.2fx\n' "$1" "$t" "$c" "$(echo "$m/1024" | bc -l)" "$(echo "$t/$3" | bc -l)"
}
