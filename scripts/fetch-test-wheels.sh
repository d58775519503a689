#!/usr/bin/env bash
# Fetches the real cuDNN builds the tests load: two small nvidia-cudnn-jit-cu12
# wheels (about 15 MB and 70 MB), once, into $CUDNNM_TEST_WHEELS
# (default: .cache/wheels in the repository); and the last 64 KiB of the real
# nvidia-cudnn-cu13 9.28.1.4 wheel for Linux x86_64 (its zip central directory:
# the file list of a current full release, without its 517 MB), from the URL the
# catalog records. Reruns are free.
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
tail_name=nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_x86_64.whl
if [ ! -s "$dest/$tail_name.tail" ]; then
  url=$(grep -o "https://files.pythonhosted.org/[^\"]*/$tail_name" "$repo/manifest.toml" | head -n1)
  curl -fsS --proto '=https' -r -65536 -o "$dest/$tail_name.tail.part" "$url"
  mv "$dest/$tail_name.tail.part" "$dest/$tail_name.tail"
fi
ls -l "$dest"
