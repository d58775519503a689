#!/usr/bin/env bash
# A bounded stress run of cudnnm's transactions and its archive checks, with
# the real nvidia-cudnn-jit-cu12 9.12.0.46 and 9.27.0.42 wheels
# ($CUDNNM_TEST_WHEELS, see scripts/fetch-test-wheels.sh):
#
#  1. kill -9 at a random point of `use` (symlink, hardlink and copy mode,
#     switching between the two releases), and now and then of the recovery
#     that follows; after each kill the next command must leave the toolkit
#     matching a record (`verify` exit 0), with no temporary file, no
#     in-flight marker, and the user's own file (a cuDNN-like name no release
#     ships) still somewhere, byte for byte;
#  2. kill -9 at a random point of `install --force`: the release must still
#     be listed and verify after the next command;
#  3. concurrent writers: WRITERS `use` at once from one home, then from
#     WRITERS homes into one toolkit; every home's verify must pass (a home
#     whose deployment another replaced says so, exit 0);
#  4. hostile archives: a file shadowed by a folder entry, duplicate entries
#     (zip and tar), a file/folder clash in tar, a tampered wheel RECORD, a
#     wheel member missing from RECORD, a zip bomb of many entries, a tar
#     bomb, 200,000 entries, a 300-character name: each must be refused
#     (exit 4, or 1 for a disk-space refusal) with nothing left in the store,
#     and within MAX_RSS_MB of memory.
#
# Bounded: KILLS_USE (default 40) and KILLS_INSTALL (default 20) kills,
# WRITERS (default 6), and TIME_LIMIT seconds (default 900) for the whole
# run (phases are skipped once it is spent). Uses the debug binary
# (target/debug/cudnnm, built if missing); work folder under $STRESS_TMP
# (default target/). Prints the figures at the end; exits 1 on any finding.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
kills_use="${KILLS_USE:-40}"
kills_install="${KILLS_INSTALL:-20}"
writers="${WRITERS:-6}"
limit="${TIME_LIMIT:-900}"
max_rss_mb="${MAX_RSS_MB:-200}"
wheels="${CUDNNM_TEST_WHEELS:-$repo/.cache/wheels}"
w12=$(compgen -G "$wheels/nvidia_cudnn_jit_cu12-9.12.0.46-*.whl" | head -n1)
w27=$(compgen -G "$wheels/nvidia_cudnn_jit_cu12-9.27.0.42-*.whl" | head -n1)
[ -n "$w12" ] && [ -n "$w27" ] || { echo "the jit wheels are not in $wheels (scripts/fetch-test-wheels.sh)" >&2; exit 2; }
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"
[ -x target/debug/cudnnm ] || cargo build --quiet
bin="$repo/target/debug/cudnnm"
mkdir -p "${STRESS_TMP:-$repo/target}"
work=$(mktemp -d "${STRESS_TMP:-$repo/target}/stress.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
start=$(date +%s)
stale_markers=0
findings=()
found() { findings+=("$1"); echo "FINDING: $1" >&2; }
time_left() { [ $(( $(date +%s) - start )) -lt "$limit" ]; }
export CUDNNM_SYSTEM_HOME="$work/system"

toolkit() { # a CUDA 12.4 toolkit folder in the Linux layout
  mkdir -p "$1/targets/x86_64-linux/lib" "$1/targets/x86_64-linux/include"
  ln -s targets/x86_64-linux/lib "$1/lib64"
  ln -s targets/x86_64-linux/include "$1/include"
  printf '{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}\n' >"$1/version.json"
}

# Kills `cudnnm ARGS` after a random 0-DELAY_MS ms; returns its exit code
# (137 when killed before it ended).
kill_at_random() {
  local delay_ms=$1; shift
  "$bin" -q "$@" >/dev/null 2>"$work/last.err" &
  local pid=$!
  sleep "$(awk -v r="$RANDOM" -v d="$delay_ms" 'BEGIN{printf "%.3f", (r/32767)*d/1000}')"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return $?
}

# The toolkit matches a record, holds no temporary file and no marker, and
# the user's plugin is somewhere in the toolkit or a backup of HOME.
check_toolkit() { # HOME TK WHAT
  local home=$1 tk=$2 what=$3
  if ! CUDNNM_HOME="$home" "$bin" -q verify --no-load >"$work/verify.out" 2>&1; then
    found "$what: verify failed: $(grep -m3 -E 'CHANGED|missing|modified|error' "$work/verify.out" | tr '\n' ' ')"
  fi
  if find -L "$tk" -name '.cudnnm-tmp-*' 2>/dev/null | grep -q .; then
    found "$what: a temporary file stayed in the toolkit"
  fi
  # A marker whose journal is gone is stale (a kill between the two, which
  # must come in that order): harmless, replaced by the next change. One
  # with its journal still there is a change left unfinished.
  if [ -e "$tk/.cudnnm-inflight.toml" ]; then
    local id; id=$(sed -n 's/^backup = //p' "$tk/.cudnnm-inflight.toml")
    if [ -e "$home/journal/$id.json" ]; then
      found "$what: the change of backup $id was left unfinished"
    else
      stale_markers=$((stale_markers + 1))
    fi
  fi
  if ! { cmp -s "$work/plugin" "$tk/lib64/libcudnn_myplugin.so.9" ||
         find "$home/backups" -path '*/files/*' -name libcudnn_myplugin.so.9 -exec cmp -s "$work/plugin" {} \; -print 2>/dev/null | grep -q .; }; then
    found "$what: the user's libcudnn_myplugin.so.9 is gone"
  fi
}

echo "== 1. kill -9 during use ($kills_use kills)"
h1="$work/h1"; tk1="$work/cuda-12.4"
toolkit "$tk1"
head -c 4096 /dev/urandom >"$work/plugin"
cp "$work/plugin" "$tk1/lib64/libcudnn_myplugin.so.9"
CUDNNM_HOME="$h1" "$bin" -q install "$w12" && CUDNNM_HOME="$h1" "$bin" -q install "$w27" || found "install of the real wheels failed"
# The kill lands anywhere in a switch: up to 1.2 times its length, as timed here.
t0=$(date +%s%N)
CUDNNM_HOME="$h1" "$bin" -q use 9.12.0.46 --cuda-root "$tk1" --mode copy || found "the first use failed"
use_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
CUDNNM_HOME="$h1" "$bin" -q use 9.27.0.42 --cuda-root "$tk1" --mode symlink || found "the second use failed"
check_toolkit "$h1" "$tk1" "before the kills"
echo "   (a switch takes about $use_ms ms here)"
use_kills=0 use_recovery_kills=0 use_finished=0
for i in $(seq 1 "$kills_use"); do
  time_left || break
  modes=(symlink hardlink copy); mode=${modes[$((RANDOM % 3))]}
  rel=$([ $((i % 2)) -eq 0 ] && echo 9.12.0.46 || echo 9.27.0.42)
  CUDNNM_HOME="$h1" kill_at_random $((use_ms * 12 / 10 + 1)) use "$rel" --cuda-root "$tk1" --mode "$mode"
  rc=$?
  if [ "$rc" -eq 137 ]; then use_kills=$((use_kills + 1)); else use_finished=$((use_finished + 1)); fi
  if [ "$rc" -ne 137 ] && [ "$rc" -ne 0 ]; then found "use $rel --mode $mode exited $rc: $(head -c 300 "$work/last.err")"; fi
  if [ $((RANDOM % 4)) -eq 0 ]; then # kill the recovery too
    CUDNNM_HOME="$h1" kill_at_random $((use_ms / 2 + 1)) current --cuda-root "$tk1"
    [ $? -eq 137 ] && use_recovery_kills=$((use_recovery_kills + 1))
  fi
  CUDNNM_HOME="$h1" "$bin" -q current --cuda-root "$tk1" >/dev/null 2>"$work/rec.err" || found "recovery after kill $i failed: $(head -c 300 "$work/rec.err")"
  check_toolkit "$h1" "$tk1" "use kill $i ($rel, $mode, rc $rc)"
done

echo "== 2. kill -9 during install --force ($kills_install kills)"
h2="$work/h2"
CUDNNM_HOME="$h2" "$bin" -q install "$w27" || found "install into h2 failed"
t0=$(date +%s%N)
CUDNNM_HOME="$h2" "$bin" -q install --force "$w27" || found "install --force failed"
install_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "   (an install --force takes about $install_ms ms here)"
install_kills=0
for i in $(seq 1 "$kills_install"); do
  time_left || break
  CUDNNM_HOME="$h2" kill_at_random $((install_ms * 12 / 10 + 1)) install --force "$w27"
  rc=$?
  [ "$rc" -eq 137 ] && install_kills=$((install_kills + 1))
  [ "$rc" -ne 137 ] && [ "$rc" -ne 0 ] && found "install --force exited $rc: $(head -c 300 "$work/last.err")"
  if ! CUDNNM_HOME="$h2" "$bin" list --json 2>"$work/list.err" | grep -q '"id": "9.27.0.42_cuda12"'; then
    found "install --force kill $i: 9.27.0.42_cuda12 is not listed ($(head -c 200 "$work/list.err"))"
  fi
  CUDNNM_HOME="$h2" "$bin" -q verify --no-load >/dev/null 2>&1 || found "install --force kill $i: verify failed"
  if compgen -G "$h2/store/.partial-*" >/dev/null && ! CUDNNM_HOME="$h2" "$bin" list 2>&1 | grep -q 'interrupted install left'; then
    found "install --force kill $i: a partial folder is left unmentioned"
  fi
done

echo "== 3. concurrent writers ($writers from one home, then $writers homes)"
pids=()
for i in $(seq 1 "$writers"); do
  rel=$([ $((i % 2)) -eq 0 ] && echo 9.12.0.46 || echo 9.27.0.42)
  CUDNNM_HOME="$h1" "$bin" -q use "$rel" --cuda-root "$tk1" --mode copy >/dev/null 2>"$work/w$i.err" &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || found "writer $((i + 1)) of one home exited $?: $(head -c 200 "$work/w$((i + 1)).err")"
done
check_toolkit "$h1" "$tk1" "writers from one home"
tk3="$work/cuda-shared"; toolkit "$tk3"
for i in $(seq 1 "$writers"); do
  CUDNNM_HOME="$work/m$i" "$bin" -q install "$w12" && CUDNNM_HOME="$work/m$i" "$bin" -q install "$w27" || found "install into home m$i failed"
done
pids=()
for i in $(seq 1 "$writers"); do
  rel=$([ $((i % 2)) -eq 0 ] && echo 9.12.0.46 || echo 9.27.0.42)
  CUDNNM_HOME="$work/m$i" "$bin" -q use "$rel" --cuda-root "$tk3" --mode copy >/dev/null 2>"$work/m$i.err" &
  pids+=($!)
done
multi_refused=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"; rc=$?
  case $rc in
    0) ;;
    8) multi_refused=$((multi_refused + 1)) ;; # another home's change in flight: refused, nothing changed
    *) found "writer home m$((i + 1)) exited $rc: $(head -c 200 "$work/m$((i + 1)).err")" ;;
  esac
done
for i in $(seq 1 "$writers"); do
  CUDNNM_HOME="$work/m$i" "$bin" -q verify --no-load >"$work/verify.out" 2>&1 || found "home m$i: verify failed after the concurrent writers: $(grep -m2 -E 'CHANGED|help' "$work/verify.out" | tr '\n' ' ')"
done
[ -e "$tk3/.cudnnm-inflight.toml" ] && found "several homes: the in-flight marker stayed"

echo "== 4. hostile archives"
mkdir -p "$work/hostile"
python3 - "$w12" "$work/hostile" <<'PY' || found "building the hostile archives failed"
import io, os, sys, tarfile, zipfile, hashlib, base64
wheel, out = sys.argv[1], sys.argv[2]
src = zipfile.ZipFile(wheel)
members = [(i, src.read(i.filename)) for i in src.infolist()]
graph = "nvidia/cudnn_jit/lib/libcudnn_graph.so.9"

def rewheel(name, edit=lambda n, b: b, extra=(), drop_record=None):
    with zipfile.ZipFile(os.path.join(out, name), "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for info, data in members:
            n = info.filename
            if drop_record and n.endswith("RECORD"):
                data = b"\n".join(l for l in data.split(b"\n") if not l.startswith(drop_record.encode()))
            z.writestr(n, edit(n, data))
        for n, data in extra:
            z.writestr(n, data)

base = os.path.basename(wheel)
os.makedirs(os.path.join(out, "shadowed"), exist_ok=True)
rewheel("shadowed/" + base, extra=[(graph + "/", b"")])
os.makedirs(os.path.join(out, "duplicate-zip"), exist_ok=True)
import warnings; warnings.simplefilter("ignore")
rewheel("duplicate-zip/" + base, extra=[(graph, b"\x7fELF later copy")])
os.makedirs(os.path.join(out, "record-tampered"), exist_ok=True)
rewheel("record-tampered/" + base, edit=lambda n, b: b[:-1] + bytes([b[-1] ^ 1]) if n == graph else b)
os.makedirs(os.path.join(out, "record-missing"), exist_ok=True)
rewheel("record-missing/" + base, drop_record=graph)

# Redist-style tarballs from the wheel's files.
root = "cudnn-linux-x86_64-9.12.0.46_cuda12-archive"
def files():
    for info, data in members:
        n = info.filename
        if n.startswith("nvidia/cudnn_jit/"):
            yield root + "/" + n[len("nvidia/cudnn_jit/"):], data
def tar(name, extra):
    with tarfile.open(os.path.join(out, name), "w:xz", preset=0) as t:
        for n, data in list(files()) + extra:
            ti = tarfile.TarInfo(n)
            if data is None:
                ti.type = tarfile.DIRTYPE
                t.addfile(ti)
            else:
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
for kind in ("duplicate-tar", "clash-tar"):
    os.makedirs(os.path.join(out, kind), exist_ok=True)
tar("duplicate-tar/" + root + ".tar.xz", [(root + "/lib/libcudnn_graph.so.9", b"\x7fELF later")])
tar("clash-tar/" + root + ".tar.xz", [(root + "/lib/libcudnn_graph.so.9", None)])

# A zip bomb of many entries: ten 128 MiB entries of zeros beside a real header.
hdr = dict(files())[root + "/include/cudnn_version.h"]
zroot = "cudnn-linux-x86_64-9.12.0.46_cuda12-archive"
os.makedirs(os.path.join(out, "bomb-zip"), exist_ok=True)
with zipfile.ZipFile(os.path.join(out, "bomb-zip", zroot + ".zip"), "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    z.writestr(zroot + "/include/cudnn_version.h", hdr)
    zero = bytes(1 << 20)
    for k in range(10):
        with z.open(f"{zroot}/lib/libcudnn_blob{k}.so.9", "w", force_zip64=True) as f:
            for _ in range(128):
                f.write(zero)
# A tar bomb: one 2 GiB entry of zeros.
os.makedirs(os.path.join(out, "bomb-tar"), exist_ok=True)
class Zeros(io.RawIOBase):
    def __init__(self, n): self.n = n
    def readable(self): return True
    def readinto(self, b):
        k = min(len(b), self.n); b[:k] = bytes(k); self.n -= k; return k
with tarfile.open(os.path.join(out, "bomb-tar", root + ".tar.gz"), "w:gz", compresslevel=1) as t:
    ti = tarfile.TarInfo(root + "/include/cudnn_version.h"); ti.size = len(hdr); t.addfile(ti, io.BytesIO(hdr))
    ti = tarfile.TarInfo(root + "/lib/libcudnn_blob.so.9"); ti.size = 2 << 30; t.addfile(ti, io.BufferedReader(Zeros(2 << 30)))
# 200,000 entries.
os.makedirs(os.path.join(out, "entries-200k"), exist_ok=True)
with zipfile.ZipFile(os.path.join(out, "entries-200k", zroot + ".zip"), "w", zipfile.ZIP_STORED) as z:
    z.writestr(zroot + "/include/cudnn_version.h", hdr)
    for k in range(200000):
        z.writestr(f"{zroot}/include/x{k}.h", b"")
# A 300-character name component.
os.makedirs(os.path.join(out, "long-name"), exist_ok=True)
with zipfile.ZipFile(os.path.join(out, "long-name", zroot + ".zip"), "w", zipfile.ZIP_DEFLATED) as z:
    for n, data in files():
        z.writestr(n.replace(root, zroot), data)
    z.writestr(zroot + "/include/" + "n" * 300 + ".h", b"x")
PY
kinds=0
declare -A kind_result
for f in "$work"/hostile/*/*; do
  [ -f "$f" ] || continue
  time_left || break
  kind=$(basename "$(dirname "$f")")
  kinds=$((kinds + 1))
  hh="$work/hostile-home-$kinds"
  /usr/bin/time -f '%M' -o "$work/rss" env CUDNNM_HOME="$hh" "$bin" -q install "$f" >/dev/null 2>"$work/h.err"
  rc=$?
  rss_kb=$(tail -n1 "$work/rss")
  kind_result[$kind]="exit $rc, $((rss_kb / 1024)) MB: $(grep -m1 '^error:' "$work/h.err" | sed "s|^error: cannot import '[^']*': ||" | cut -c1-160)"
  echo "  $kind: ${kind_result[$kind]}"
  case $rc in
    4) ;;
    1) grep -q 'not enough disk space' "$work/h.err" || found "$kind: exit 1 without a disk-space refusal" ;;
    *) found "$kind: exit $rc (expected a refusal, exit 4)" ;;
  esac
  if compgen -G "$hh/store/cuda-*/*" >/dev/null || compgen -G "$hh/store/.partial-*" >/dev/null; then
    found "$kind: something stayed in the store"
  fi
  [ $((rss_kb / 1024)) -le "$max_rss_mb" ] || found "$kind: $((rss_kb / 1024)) MB of memory (over $max_rss_mb)"
done

elapsed=$(( $(date +%s) - start ))
echo
echo "== figures ($elapsed s)"
echo "use: $use_kills kills mid-change, $use_finished finished before the kill, $use_recovery_kills kills of the recovery"
echo "install --force: $install_kills kills mid-import (of $kills_install runs)"
echo "writers: $writers from one home; $writers homes at once into one toolkit ($multi_refused refused with exit 8 while another home's change was in flight)"
echo "stale in-flight markers seen (no journal; replaced by the next change): $stale_markers"
echo "hostile archives: $kinds kinds tried"
echo "findings: ${#findings[@]}"
for f in "${findings[@]}"; do echo "  - $f"; done
[ "${#findings[@]}" -eq 0 ]
