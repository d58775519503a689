#!/usr/bin/env bash
# usage: scripts/test-dist.sh
#
# Tests the release artifacts scripts/dist.sh built in dist/, as a user gets
# them (DIST_TARGETS selects the same subset dist.sh built; default: all):
# - the glibc floor check refuses a binary of this machine (/bin/ls);
# - x86_64-linux: the tarball's binary runs, passes the glibc check, and
#   installs and lists a real cuDNN wheel; `self update` on it goes from N to
#   N+1 over loopback, and a tampered N+1 is refused with N still working;
# - aarch64-linux: the tarball's binary under qemu-aarch64 (Debian's
#   qemu-user and libc6-arm64-cross): --version, install + list of a real wheel;
# - windows / wheel-windows: cudnnm.exe from the zip and from the win_amd64
#   wheel under wine (prepared by scripts/wine/setup.sh);
# - wheel-aarch64: the wheel's binary under qemu-aarch64, glibc floor;
# - wheel-x86_64: pip install into a fresh venv; --version, `install pip:…`
#   (from the local real wheels), `exec` loading the real libcudnn, and
#   `self update` pointing at pip;
# - windows: install.ps1's pattern, hash check and zip layout against dist/
#   (PowerShell itself is not available here; see install_ps1 below);
# - install.sh (run by dash, a plain POSIX sh) against a loopback HTTP
#   server serving dist/ with a fresh HOME: installs and the binary runs; a
#   tampered archive, a truncated one and a wrong SHA256SUMS line are each
#   refused with nothing installed.
# Real cuDNN wheels come from $CUDNNM_TEST_WHEELS (scripts/fetch-test-wheels.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
dist="$root/dist"
targets=",${DIST_TARGETS:-x86_64-linux,aarch64-linux,windows,wheel-x86_64,wheel-aarch64,wheel-windows},"
want() { [[ "$targets" == *",$1,"* ]]; }
wheels="${CUDNNM_TEST_WHEELS:-$HOME/.cache/cudnnm/test-wheels}"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)"
cudnn_wheel="$(ls "$wheels"/nvidia_cudnn_jit_cu12-9.12.0.46-*.whl 2>/dev/null | head -n1 || true)"
[ -n "$cudnn_wheel" ] || { echo "error: no real cuDNN wheel in $wheels; run scripts/fetch-test-wheels.sh" >&2; exit 1; }

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

fails=0
step() { printf '\n== %s\n' "$*"; }
ok() { printf 'ok: %s\n' "$*"; }
bad() { printf 'FAIL: %s\n' "$*" >&2; fails=$((fails + 1)); }
expect_eq() { # expect_eq WHAT GOT WANT
  if [ "$2" = "$3" ]; then ok "$1: $2"; else bad "$1: got '$2', want '$3'"; fi
}
need_file() { [ -e "$1" ] || { echo "error: $1 is missing; run scripts/dist.sh $version first" >&2; exit 1; }; }
timed() { local s e; s=$(date +%s); "$@"; e=$(date +%s); echo "($1: $((e - s)) s)"; }

# serve DIR: a loopback HTTP server for DIR; prints its base URL.
serve() {
  local port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  python3 -m http.server --bind 127.0.0.1 --directory "$1" "$port" >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do
    python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/')" 2>/dev/null && break
    sleep 0.1
  done
  echo "http://127.0.0.1:$port"
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

glibc_check() {
  step "the glibc floor check refuses a binary built on this machine"
  if out="$(scripts/check-glibc.sh /bin/ls 2>&1)"; then
    bad "check-glibc.sh accepted /bin/ls"
  else
    ok "check-glibc.sh refuses /bin/ls:"
    echo "$out" | sed 's/^/    /'
  fi
}

# A release archive for `self update` N+1: a script answering --version.
fake_next_release() { # fake_next_release DIR VERSION TARGET
  local d="$1/stage"
  mkdir -p "$d"
  printf '#!/bin/sh\n[ "$1" = --version ] && echo "cudnnm %s" && exit 0\necho "cudnnm %s ran"\n' "$2" "$2" >"$d/cudnnm"
  chmod 755 "$d/cudnnm"
  tar -C "$d" -czf "$1/cudnnm-$2-$3.tar.gz" cudnnm
  rm -rf "$d"
}

x86_64_tarball() {
  local tgz="$dist/cudnnm-$version-x86_64-unknown-linux-gnu.tar.gz" d="$work/x86_64"
  need_file "$tgz"
  step "x86_64 tarball: runs here, glibc floor, install + list of a real wheel"
  mkdir -p "$d" && tar -xzf "$tgz" -C "$d"
  expect_eq "--version" "$("$d/cudnnm" --version)" "cudnnm $version"
  scripts/check-glibc.sh "$d/cudnnm" 2.17 || bad "glibc floor of the x86_64 tarball"
  export CUDNNM_HOME="$work/home-x86_64"
  "$d/cudnnm" -q install "$cudnn_wheel" || bad "install of $cudnn_wheel"
  if "$d/cudnnm" list | grep -q '9.12.0.46'; then ok "list shows 9.12.0.46"; else bad "list lacks 9.12.0.46"; fi
  unset CUDNNM_HOME

  step "x86_64 tarball: self update N -> N+1 over loopback; a tampered N+1 is refused"
  local next="${version%.*}.$((${version##*.} + 1))" rel="$work/rel" tgt=x86_64-unknown-linux-gnu url
  mkdir -p "$rel" "$work/selfupd"
  cp "$d/cudnnm" "$work/selfupd/cudnnm"
  fake_next_release "$rel" "$next" "$tgt"
  cp "$rel/cudnnm-$next-$tgt.tar.gz" "$rel/good.tar.gz"
  printf '%s  cudnnm-%s-%s.tar.gz\n' "$(sha "$rel/good.tar.gz")" "$next" "$tgt" >"$rel/SHA256SUMS"
  url="$(serve "$rel")"
  printf 'x' >>"$rel/cudnnm-$next-$tgt.tar.gz"
  if "$work/selfupd/cudnnm" self update --base "$url" 2>"$work/err"; then
    bad "self update accepted a tampered N+1"
  else
    ok "tampered N+1 refused: $(grep '^error' "$work/err")"
  fi
  expect_eq "N still runs" "$("$work/selfupd/cudnnm" --version)" "cudnnm $version"
  cmp -s "$d/cudnnm" "$work/selfupd/cudnnm" && ok "N unchanged byte for byte" || bad "N changed"
  cp "$rel/good.tar.gz" "$rel/cudnnm-$next-$tgt.tar.gz"
  "$work/selfupd/cudnnm" self update --base "$url" || bad "self update to $next"
  expect_eq "after self update" "$("$work/selfupd/cudnnm" --version)" "cudnnm $next"
}

aarch64_tarball() {
  local tgz="$dist/cudnnm-$version-aarch64-unknown-linux-gnu.tar.gz" d="$work/aarch64"
  need_file "$tgz"
  step "aarch64 tarball under qemu-aarch64: --version, install + list of a real wheel"
  mkdir -p "$d" && tar -xzf "$tgz" -C "$d"
  scripts/check-glibc.sh "$d/cudnnm" 2.17 || bad "glibc floor of the aarch64 tarball"
  export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu CUDNNM_HOME="$work/home-aarch64"
  expect_eq "--version under qemu" "$(qemu-aarch64 "$d/cudnnm" --version)" "cudnnm $version"
  qemu-aarch64 "$d/cudnnm" -q install "$cudnn_wheel" || bad "install of $cudnn_wheel under qemu"
  if qemu-aarch64 "$d/cudnnm" list | grep -q '9.12.0.46'; then ok "list under qemu shows 9.12.0.46"; else bad "list under qemu lacks 9.12.0.46"; fi
  unset QEMU_LD_PREFIX CUDNNM_HOME
}

wine_env() {
  [ -n "${WINE:-}" ] && return
  local vars
  vars="$(scripts/wine/setup.sh)"
  eval "$vars"
  export WINEDEBUG=-all
}

windows_zip() {
  local zip="$dist/cudnnm-$version-x86_64-pc-windows-gnu.zip" d="$work/win"
  need_file "$zip"
  step "windows zip: cudnnm.exe under wine"
  wine_env
  mkdir -p "$d" && python3 -m zipfile -e "$zip" "$d"
  expect_eq "cudnnm.exe --version" "$("$WINE" "$d/cudnnm.exe" --version | tr -d '\r')" "cudnnm $version"
}

wheel_windows() {
  local whl d="$work/winwheel"
  whl="$(ls "$dist"/cudnnm-"$version"-*win_amd64.whl 2>/dev/null | head -n1 || true)"
  need_file "${whl:-$dist/cudnnm-$version-py3-none-win_amd64.whl}"
  step "win_amd64 wheel: cudnnm.exe under wine"
  wine_env
  mkdir -p "$d" && python3 -m zipfile -e "$whl" "$d"
  local exe
  exe="$(find "$d" -name cudnnm.exe | head -n1)"
  expect_eq "wheel cudnnm.exe --version" "$("$WINE" "$exe" --version | tr -d '\r')" "cudnnm $version"
  if { "$WINE" "$exe" self update 2>&1 || true; } | tr -d '\r' | grep -q 'pip install -U cudnnm'; then
    ok "wheel's self update points at pip"
  else
    bad "wheel's self update does not point at pip"
  fi
}

wheel_aarch64() {
  local whl d="$work/armwheel" exe
  whl="$(ls "$dist"/cudnnm-"$version"-*manylinux_2_17_aarch64*.whl 2>/dev/null | head -n1 || true)"
  need_file "${whl:-$dist/cudnnm-$version-py3-none-manylinux_2_17_aarch64.whl}"
  step "aarch64 wheel: its binary under qemu-aarch64"
  mkdir -p "$d" && python3 -m zipfile -e "$whl" "$d"
  exe="$(find "$d" -name cudnnm -type f | head -n1)"
  chmod 755 "$exe"
  scripts/check-glibc.sh "$exe" 2.17 || bad "glibc floor of the aarch64 wheel"
  export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
  expect_eq "wheel --version under qemu" "$(qemu-aarch64 "$exe" --version)" "cudnnm $version"
  if { qemu-aarch64 "$exe" self update 2>&1 || true; } | grep -q 'pip install -U cudnnm'; then
    ok "aarch64 wheel's self update points at pip"
  else
    bad "aarch64 wheel's self update does not point at pip"
  fi
  unset QEMU_LD_PREFIX
}

wheel_x86_64() {
  local whl venv="$work/venv"
  whl="$(ls "$dist"/cudnnm-"$version"-*manylinux_2_17_x86_64*.whl 2>/dev/null | head -n1 || true)"
  need_file "${whl:-$dist/cudnnm-$version-py3-none-manylinux_2_17_x86_64.whl}"
  step "x86_64 wheel: pip install into a fresh venv; --version, install pip:…, exec"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --no-index "$whl" || bad "pip install $whl"
  expect_eq "venv cudnnm --version" "$("$venv/bin/cudnnm" --version)" "cudnnm $version"
  export CUDNNM_HOME="$work/home-wheel" CUDNNM_PYTHON="$venv/bin/python" PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels"
  "$venv/bin/cudnnm" -q install pip:nvidia-cudnn-jit-cu12==9.12.0.46 || bad "install pip:nvidia-cudnn-jit-cu12==9.12.0.46"
  local got
  got="$("$venv/bin/cudnnm" exec --version 9.12 -- "$venv/bin/python" -c \
    'import ctypes; print(ctypes.CDLL("libcudnn.so.9").cudnnGetVersion())' || true)"
  expect_eq "exec: cudnnGetVersion() of the loaded libcudnn.so.9" "$got" 91200
  if { "$venv/bin/cudnnm" self update 2>&1 || true; } | grep -q 'pip install -U cudnnm'; then
    ok "wheel's self update points at pip"
  else
    bad "wheel's self update does not point at pip"
  fi
  unset CUDNNM_HOME CUDNNM_PYTHON PIP_NO_INDEX PIP_FIND_LINKS
}

# install.ps1 is not run here: no PowerShell comes from Debian's packages or
# PyPI, and npm's `pwsh` downloads it from GitHub when installed. What it
# relies on is checked against the real dist/ instead, the script's own
# pieces (its $target, its SHA256SUMS pattern, applied case-insensitively as
# PowerShell's -match does, and its [version] sort) read from dist/install.ps1:
# over a loopback server it selects the zip dist.sh built, its hash check
# passes on that zip and fails on a tampered one, the zip holds cudnnm.exe at
# the top (Expand-Archive then Join-Path 'cudnnm.exe'), and its default base
# is the released install.sh's.
install_ps1() {
  local zip="cudnnm-$version-x86_64-pc-windows-gnu.zip" url
  need_file "$dist/$zip"
  step "install.ps1 (not run: no PowerShell here): its pattern, hash check and zip layout against dist/"
  url="$(serve "$dist")"
  if out="$(python3 - "$dist" "$url" "$zip" 2>&1 <<'PY'
import hashlib, io, re, sys, urllib.request, zipfile
dist, base, want = sys.argv[1:]
ps1 = open(f"{dist}/install.ps1", encoding="utf-8").read()
sh = open(f"{dist}/install.sh", encoding="utf-8").read()
target = re.search(r"^\$target = '([^']*)'$", ps1, re.M).group(1)
head, tail = re.search(r"^\s*\$pattern = '([^']*)' \+ \[Regex\]::Escape\(\$target\) \+ '([^']*)'$", ps1, re.M).groups()
pattern = re.compile(head + re.escape(target) + tail, re.I)
fetch = lambda name: urllib.request.urlopen(f"{base}/{name}").read()
found = []
for line in fetch("SHA256SUMS").decode().splitlines():
    m = pattern.match(line)
    if m:
        found.append((tuple(int(p) for p in m.group(3).split(".")), m.group(1).lower(), m.group(2)))
assert found, f"the pattern of install.ps1 matches no line of SHA256SUMS"
_, hash_, name = max(found)
assert name == want, f"install.ps1 picks {name}, dist.sh built {want}"
body = fetch(name)
assert hashlib.sha256(body).hexdigest() == hash_, "install.ps1's hash check fails on the real zip"
bad = bytearray(body); bad[len(bad) // 2] ^= 1
assert hashlib.sha256(bad).hexdigest() != hash_, "install.ps1's hash check passes a tampered zip"
assert "cudnnm.exe" in zipfile.ZipFile(io.BytesIO(body)).namelist(), "no cudnnm.exe at the top of the zip"
ps1_base = re.search(r"^\$ReleaseBase = '([^']*)'$", ps1, re.M).group(1)
sh_base = re.search(r"^release_base='([^']*)'$", sh, re.M).group(1)
assert ps1_base == sh_base, f"install.ps1's default base {ps1_base} differs from install.sh's {sh_base}"
print(f"picks {name} ({hash_[:12]}…), hash check holds, cudnnm.exe at the top, default base {ps1_base}")
PY
  )"; then
    ok "install.ps1 against dist/: $out"
  else
    bad "install.ps1 against dist/: $out"
  fi
}

# install_sh NAME BASE: runs install.sh with a fresh HOME; sets $ihome.
install_sh() {
  ihome="$work/home-$1"
  mkdir -p "$ihome"
  env -i PATH=/usr/bin:/bin HOME="$ihome" CUDNNM_INSTALL_BASE="$2" dash "$root/install.sh"
}

install_script() {
  need_file "$dist/SHA256SUMS"
  step "install.sh against a loopback server serving dist/"
  local url
  url="$(serve "$dist")"
  if install_sh good "$url" 2>"$work/err"; then
    expect_eq "installed binary" "$("$ihome/.local/bin/cudnnm" --version)" "cudnnm $version"
    grep -q 'export PATH=' "$work/err" && ok "PATH hint printed" || bad "no PATH hint"
  else
    bad "install.sh failed: $(cat "$work/err")"
  fi

  local name="cudnnm-$version-x86_64-unknown-linux-gnu.tar.gz" case_dir
  for case in tampered truncated wrong-sums; do
    case_dir="$work/mirror-$case"
    mkdir -p "$case_dir"
    cp "$dist/SHA256SUMS" "$dist/$name" "$case_dir/"
    case $case in
      tampered) printf '\x01' | dd of="$case_dir/$name" bs=1 seek=2000 conv=notrunc status=none ;;
      truncated) truncate -s 100000 "$case_dir/$name" ;;
      wrong-sums) sed -i "s/^[0-9a-f]*\(  $name\)\$/$(printf '0%.0s' $(seq 64))\1/" "$case_dir/SHA256SUMS" ;;
    esac
    url="$(serve "$case_dir")"
    if install_sh "$case" "$url" 2>"$work/err"; then
      bad "install.sh accepted a $case archive"
    elif [ -e "$ihome/.local" ]; then
      bad "install.sh left files after refusing a $case archive: $(find "$ihome/.local")"
    else
      ok "$case archive refused, nothing installed: $(grep '^error' "$work/err")"
    fi
  done
}

start=$(date +%s)
glibc_check
want x86_64-linux && timed x86_64_tarball
want aarch64-linux && timed aarch64_tarball
want windows && timed windows_zip
want windows && timed install_ps1
want wheel-windows && timed wheel_windows
want wheel-aarch64 && timed wheel_aarch64
want wheel-x86_64 && timed wheel_x86_64
want x86_64-linux && timed install_script
[ -n "${WINE:-}" ] && "$(dirname "$WINE")/wineserver" -k 2>/dev/null || true
echo
echo "test-dist: $fails failure(s) in $(($(date +%s) - start)) s"
[ "$fails" -eq 0 ]
