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
# wine leaves its server running for a few seconds. Let it end on its own,
# which saves the prefix's registry (the registry test puts the user PATH
# back as it found it; a server killed at once may keep only what it saved
# in the middle of that test); kill it only when something still holds it.
wineserver="$(dirname "$WINE")/wineserver"
timeout 60 "$wineserver" -w 2>/dev/null || "$wineserver" -k 2>/dev/null || true
exit $status
