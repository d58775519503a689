#!/usr/bin/env bash
# Fetches the real cuDNN builds the tests load: two small nvidia-cudnn-jit-cu12
# wheels (about 15 MB and 70 MB), once, into $CUDNNM_TEST_WHEELS
# (default: .cache/wheels in the repository). Reruns are free.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dest="${CUDNNM_TEST_WHEELS:-$repo/.cache/wheels}"
mkdir -p "$dest"
for ver in 9.12.0.46 9.27.0.42; do
  if compgen -G "$dest/nvidia_cudnn_jit_cu12-$ver-*.whl" >/dev/null; then
    continue
  fi
  python3 -m pip download --quiet --no-deps --dest "$dest" "nvidia-cudnn-jit-cu12==$ver"
done
ls -l "$dest"
