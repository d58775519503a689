#!/usr/bin/env bash
# The main job end to end on a fresh machine: build cudnnm; make a sandbox
# CUDA 12 toolkit folder (Linux layout: lib64 -> targets/x86_64-linux/lib);
# install two real cuDNN builds with pip into a sandbox home; `use` one, then
# the other; `rollback`. After each step, load the toolkit's
# lib64/libcudnn.so.9 in a fresh process and print what cudnnGetVersion()
# reports (expected: 91200, 92700, 91200). Needs cargo, python3 and pip.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
# Cargo's own progress (a bar on a terminal, "Compiling …" lines otherwise)
# shows the build is moving: the first release build takes minutes.
echo "== building cudnnm (cargo build --release; the first build takes several minutes)"
cargo build --release
cudnnm="$repo/target/release/cudnnm"
sandbox=$(mktemp -d "${TMPDIR:-/tmp}/cudnnm-demo.XXXXXX")
# The sandbox holds two imported releases (~190 MB): removed on exit unless KEEP=1.
trap '[ -n "${KEEP:-}" ] || rm -rf "$sandbox"' EXIT
export CUDNNM_HOME="$sandbox/home"
toolkit="$sandbox/cuda-12.4"
echo "== sandbox: $sandbox (kept after the run with KEEP=1)"

echo "== a CUDA 12.4 toolkit folder (Linux layout) at $toolkit"
mkdir -p "$toolkit/targets/x86_64-linux/lib" "$toolkit/targets/x86_64-linux/include" "$toolkit/bin"
ln -s targets/x86_64-linux/lib "$toolkit/lib64"
ln -s targets/x86_64-linux/include "$toolkit/include"
printf '{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}\n' >"$toolkit/version.json"

version_of() { # cudnnGetVersion() of a library, loaded by a fresh python3 (ctypes)
  python3 -c 'import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); l.cudnnGetVersion.restype=ctypes.c_size_t; print(l.cudnnGetVersion())' "$1"
}
report() {
  echo "   cudnnGetVersion() of $toolkit/lib64/libcudnn.so.9: $(version_of "$toolkit/lib64/libcudnn.so.9")"
}

for v in 9.12.0.46 9.27.0.42; do
  echo "== cudnnm install pip:nvidia-cudnn-jit-cu12==$v"
  "$cudnnm" install "pip:nvidia-cudnn-jit-cu12==$v"
done
echo "== cudnnm list"
"$cudnnm" list

echo "== cudnnm use 9.12.0.46 --cuda-root $toolkit"
"$cudnnm" use 9.12.0.46 --cuda-root "$toolkit"
report
echo "== cudnnm use 9.27.0.42 --cuda-root $toolkit"
"$cudnnm" use 9.27.0.42 --cuda-root "$toolkit"
report
echo "== cudnnm rollback --cuda-root $toolkit"
"$cudnnm" rollback --cuda-root "$toolkit"
report

echo "== cudnnm current --cuda-root $toolkit"
"$cudnnm" current --cuda-root "$toolkit"
echo "== cudnnm backups"
"$cudnnm" backups
echo "== ls -l $toolkit/lib64/"
ls -l "$toolkit/lib64/"
