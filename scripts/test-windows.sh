#!/usr/bin/env bash
# Builds cudnnm for Windows (x86_64-pc-windows-gnu, C runtime linked
# statically) and runs its test suite under wine: the platform-neutral tests
# and the Windows ones. Needs the rustup target, mingw-w64 and wine
# (.ci/run installs them); the wine prefix is prepared by scripts/wine/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target list --installed | grep -qx x86_64-pc-windows-gnu || rustup target add x86_64-pc-windows-gnu
# On its own line so that `set -e` stops here when the prefix cannot be made.
vars="$(scripts/wine/setup.sh)"
eval "$vars"
export WINEDEBUG=-all
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$WINE"
# A real PE DLL (the stand-in setup.sh built) for the test that loads a
# DLL into a running program and then switches cuDNN under it.
export CUDNNM_TEST_PE_DLL="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
status=0
cargo test --target x86_64-pc-windows-gnu "$@" || status=$?
# wine leaves its server running for a few seconds; stop it so CI ends cleanly.
"$(dirname "$WINE")/wineserver" -k 2>/dev/null || true
exit $status
