#!/usr/bin/env bash
# The main job end to end on a fresh machine: build cudnnm, install two real
# cuDNN builds with pip into a sandbox home, and print what each library
# reports when loaded.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
cargo build --release --quiet
cudnnm="$repo/target/release/cudnnm"
sandbox=$(mktemp -d "${TMPDIR:-/tmp}/cudnnm-demo.XXXXXX")
export CUDNNM_HOME="$sandbox/home"
echo "== sandbox: $sandbox"

version_of() { # print cudnnGetVersion() of a library, loaded by python's ctypes
  python3 -c 'import ctypes,sys; l=ctypes.CDLL(sys.argv[1]); l.cudnnGetVersion.restype=ctypes.c_size_t; print(l.cudnnGetVersion())' "$1"
}

for v in 9.12.0.46 9.27.0.42; do
  echo "== cudnnm install pip:nvidia-cudnn-jit-cu12==$v"
  "$cudnnm" install "pip:nvidia-cudnn-jit-cu12==$v"
done
echo "== cudnnm list"
"$cudnnm" list
for v in 9.12.0.46 9.27.0.42; do
  echo "cudnnGetVersion() of store/cuda-12/$v/lib/libcudnn.so.9: $(version_of "$CUDNNM_HOME/store/cuda-12/$v/lib/libcudnn.so.9")"
done
