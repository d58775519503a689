#!/usr/bin/env bash
# The README's Windows walkthrough, run for real under wine: builds the
# Windows cudnnm.exe; makes the two cuDNN zips this project exists for in
# NVIDIA's exact layouts (`cudnn-8.0-windows7-x64-v7.1.zip`: cuDNN 7.1.3 for
# CUDA 8.0; `cudnn-11.2-windows-x64-v8.1.0.77.zip`: 8.1.0.77 for CUDA 11.2;
# `cuda\bin`, `cuda\include`, `cuda\lib\x64`), whose DLLs are stand-ins that
# answer cudnnGetVersion() as the real ones do (7103, 8100); makes the two
# toolkit folders `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v8.0`
# and `\v11.2` in a wine prefix of its own; then runs the walkthrough's
# commands (install, use, current, verify, rollback to the cuDNN 8.0.5
# copied in by hand before) and prints
# what each printed. No GPU, no NVIDIA download.
#
# Needs the rustup target x86_64-pc-windows-gnu, gcc-mingw-w64-x86-64,
# wine64 and python3 (for zip). KEEP=1 keeps the sandbox.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
sandbox=$(mktemp -d "${TMPDIR:-/tmp}/cudnnm-demo-windows.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$sandbox"' EXIT
# A prefix of the demo's own, so that its toolkits never mix with the tests'.
export WINEPREFIX="$sandbox/wine"
vars="$(scripts/wine/setup.sh)"
eval "$vars"
export WINEDEBUG=-all

echo "== building cudnnm.exe (cargo build --target x86_64-pc-windows-gnu)" >&2
cargo build -q --target x86_64-pc-windows-gnu
cp target/x86_64-pc-windows-gnu/debug/cudnnm.exe "$sandbox/cudnnm.exe"

# A cuDNN DLL stand-in: the two version calls a real one answers without a GPU.
cat >"$sandbox/cudnn.c" <<'EOF'
#include <stddef.h>
__declspec(dllexport) size_t cudnnGetVersion(void) { return CUDNN_VERSION; }
__declspec(dllexport) size_t cudnnGetCudartVersion(void) { return CUDART_VERSION; }
EOF
dll() { # OUT CUDNN_VERSION CUDART_VERSION
  x86_64-w64-mingw32-gcc -O2 -shared -o "$1" -DCUDNN_VERSION="$2" -DCUDART_VERSION="$3" "$sandbox/cudnn.c"
}
header() { # MAJOR MINOR PATCH
  printf '#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n' "$1" "$2" "$3"
}

# cuDNN 7.1.3 for CUDA 8.0: one DLL, one header, one import library.
z7="$sandbox/zip7/cuda"
mkdir -p "$z7/bin" "$z7/include" "$z7/lib/x64"
dll "$z7/bin/cudnn64_7.dll" 7103 8000
header 7 1 3 >"$z7/include/cudnn.h"
printf '!<arch>\n' >"$z7/lib/x64/cudnn.lib"
echo "NVIDIA cuDNN Software License Agreement" >"$z7/NVIDIA_SLA_cuDNN_Support.txt"

# cuDNN 8.1.0.77 for CUDA 11.2: seven DLLs, nine headers, fourteen import libraries.
z8="$sandbox/zip8/cuda"
mkdir -p "$z8/bin" "$z8/include" "$z8/lib/x64"
dll "$z8/bin/cudnn64_8.dll" 8100 11020
printf '!<arch>\n' >"$z8/lib/x64/cudnn.lib"
printf '!<arch>\n' >"$z8/lib/x64/cudnn64_8.lib"
for s in ops_infer ops_train cnn_infer cnn_train adv_infer adv_train; do
  cp "$z8/bin/cudnn64_8.dll" "$z8/bin/cudnn_${s}64_8.dll"
  printf '#include "cudnn_version.h"\n' >"$z8/include/cudnn_$s.h"
  printf '!<arch>\n' >"$z8/lib/x64/cudnn_$s.lib"
  printf '!<arch>\n' >"$z8/lib/x64/cudnn_${s}64_8.lib"
done
header 8 1 0 >"$z8/include/cudnn_version.h"
printf '#include "cudnn_version.h"\n' >"$z8/include/cudnn.h"
printf '#include "cudnn_version.h"\n' >"$z8/include/cudnn_backend.h"
echo "NVIDIA cuDNN Software License Agreement" >"$z8/NVIDIA_SLA_cuDNN_Support.txt"

downloads="$WINEPREFIX/drive_c/users/Public/Downloads"
mkdir -p "$downloads"
zipdir() { (cd "$1" && python3 -c 'import sys,zipfile,os
with zipfile.ZipFile(sys.argv[1],"w",zipfile.ZIP_DEFLATED) as z:
    for d,_,fs in sorted(os.walk("cuda")):
        for f in sorted(fs): z.write(os.path.join(d,f))' "$2"); }
zipdir "$sandbox/zip7" "$downloads/cudnn-8.0-windows7-x64-v7.1.zip"
zipdir "$sandbox/zip8" "$downloads/cudnn-11.2-windows-x64-v8.1.0.77.zip"

# The two toolkits as NVIDIA's installer lays them out (bin, include, lib\x64;
# version.txt up to CUDA 11.0, version.json from 11.1), with the runtime DLL.
cuda="$WINEPREFIX/drive_c/Program Files/NVIDIA GPU Computing Toolkit/CUDA"
for v in 8.0 11.2; do
  t="$cuda/v$v"
  mkdir -p "$t/bin" "$t/include" "$t/lib/x64"
  printf '#define CUDA_VERSION %s\n' "$([ $v = 8.0 ] && echo 8000 || echo 11020)" >"$t/include/cuda.h"
done
echo "CUDA Version 8.0.61" >"$cuda/v8.0/version.txt"
printf '{"cuda": {"name": "CUDA SDK", "version": "11.2.2"}}\n' >"$cuda/v11.2/version.json"
printf 'MZ' >"$cuda/v8.0/bin/cudart64_80.dll"
printf 'MZ' >"$cuda/v11.2/bin/cudart64_110.dll"
# The CUDA 11.2 toolkit already holds cuDNN 8.0.5, copied in by hand the
# usual way (cuda\bin, cuda\include, cuda\lib\x64 of NVIDIA's zip into the
# toolkit): `use` keeps it in the toolkit's first backup, `rollback` brings it back.
t="$cuda/v11.2"
dll "$t/bin/cudnn64_8.dll" 8005 11000
header 8 0 5 >"$t/include/cudnn_version.h"
printf '#include "cudnn_version.h"\n' >"$t/include/cudnn.h"
printf '!<arch>\n' >"$t/lib/x64/cudnn.lib"
# What NVIDIA's installer sets; the user's Windows has these already.
export CUDA_PATH='C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2'
export CUDA_PATH_V8_0='C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v8.0'
export CUDA_PATH_V11_2="$CUDA_PATH"
export WINEPATH=
# The home inside the prefix, where %LOCALAPPDATA% would put it.
export CUDNNM_HOME='C:\users\Public\cudnnm'
export NO_COLOR=1

run() { # the command as the user types it, then what it printed
  printf '\nPS> cudnnm %s\n' "$*"
  (cd "$downloads" && "$WINE" "$sandbox/cudnnm.exe" "$@" 2>&1) | tr -d '\r' || true
}

run install cudnn-8.0-windows7-x64-v7.1.zip
run install cudnn-11.2-windows-x64-v8.1.0.77.zip --sha256 "$(sha256sum "$downloads/cudnn-11.2-windows-x64-v8.1.0.77.zip" | cut -d' ' -f1)"
run list
run use 7.1.3 --cuda 8.0
run use 8.1.0.77 --cuda 11.2
run current --cuda 11.2
run verify
run rollback --cuda 11.2
run verify
run backups
