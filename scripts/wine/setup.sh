#!/usr/bin/env bash
# Makes a wine prefix that can run Rust's Windows binaries, and prints
# `export WINEPREFIX=… WINE=…` lines (shell-quoted) for the caller to eval.
#
# wine 8.0 (Debian 12) lacks bcryptprimitives.dll, whose ProcessPrng Rust's
# standard library imports, so every Rust .exe fails to start (c0000135).
# This builds the one-function stand-in (processprng.c) with mingw-w64 and
# puts it in the prefix's system32. Idempotent; the prefix defaults to
# ~/.cache/cudnnm/wine so the user's own ~/.wine is never touched.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export WINEPREFIX="${WINEPREFIX:-$HOME/.cache/cudnnm/wine}"
export WINEDEBUG="${WINEDEBUG:--all}"
wine="${WINE:-}"
if [ -z "$wine" ]; then
  for c in /usr/lib/wine/wine64 wine64 wine; do
    if command -v "$c" >/dev/null 2>&1; then wine="$(command -v "$c")"; break; fi
  done
fi
[ -n "$wine" ] || { echo "error: wine not found" >&2; echo "hint: apt-get install -y wine64" >&2; exit 1; }
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || {
  echo "error: x86_64-w64-mingw32-gcc not found" >&2
  echo "hint: apt-get install -y gcc-mingw-w64-x86-64" >&2
  exit 1
}

sys32="$WINEPREFIX/drive_c/windows/system32"
if [ ! -d "$sys32" ]; then
  mkdir -p "$WINEPREFIX"
  # First run creates the prefix (several seconds); no display needed.
  DISPLAY= "$wine" wineboot --init >/dev/null 2>&1 || true
  wineserver="$(dirname "$wine")/wineserver"
  [ -x "$wineserver" ] || wineserver=wineserver
  "$wineserver" -w 2>/dev/null || true
fi
[ -d "$sys32" ] || { echo "error: wine did not create $sys32" >&2; echo "hint: run '$wine wineboot --init' and read its output" >&2; exit 1; }

dll="$sys32/bcryptprimitives.dll"
if [ ! -f "$dll" ] || [ "$here/processprng.c" -nt "$dll" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  x86_64-w64-mingw32-gcc -O2 -shared -o "$tmp/bcryptprimitives.dll" \
    "$here/processprng.c" "$here/processprng.def" -ladvapi32
  cp "$tmp/bcryptprimitives.dll" "$dll"
fi
# Shell-quoted, for `eval` by the caller (paths may hold spaces).
printf 'export WINEPREFIX=%q\nexport WINE=%q\n' "$WINEPREFIX" "$wine"
