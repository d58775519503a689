#!/bin/sh
# Installs cudnnm on Linux without Rust and without root:
#
#   curl -LsSf RELEASE_BASE/install.sh | sh
#
# (RELEASE_BASE is release_base below; README.md's Install section has the
# full command.)
#
# Picks the release archive for this machine (x86_64 or aarch64, glibc 2.17
# or newer), downloads it and SHA256SUMS from CUDNNM_INSTALL_BASE (default:
# release_base, the latest release; a mirror URL or a local folder works too),
# checks the archive's SHA-256 before anything is written, and puts the
# binary into CUDNNM_INSTALL_DIR (default: ~/.local/bin). A tampered or
# truncated download is refused and nothing is installed.
set -eu

# The project's release downloads: the one place this script names them
# (scripts/dist.sh writes a fork's own into the copy it releases).
release_base='https://github.com/cudnnm/cudnnm/releases/latest/download'
base="${CUDNNM_INSTALL_BASE:-$release_base}"
dest="${CUDNNM_INSTALL_DIR:-${HOME:?HOME is not set}/.local/bin}"

say() { printf 'cudnnm installer: %s\n' "$*" >&2; }
fail() {
  printf 'error: %s\n' "$1" >&2
  [ -n "${2:-}" ] && printf 'help: %s\n' "$2" >&2
  exit 1
}

case "$(uname -s)" in
  Linux) ;;
  *) fail "this installer is for Linux; found $(uname -s)" "on Windows use install.ps1; elsewhere: pip install cudnnm" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) target=x86_64-unknown-linux-gnu ;;
  aarch64 | arm64) target=aarch64-unknown-linux-gnu ;;
  *) fail "no cudnnm release for $(uname -m)" "pip install cudnnm, or build from source: cargo install --path ." ;;
esac

# fetch SOURCE FILE: an http(s):// or file:// URL, or a path in a local folder.
fetch() {
  case "$1" in
    http://* | https://*)
      if command -v curl >/dev/null 2>&1; then
        curl --proto '=https,http' -fsSL --retry 3 -o "$2" "$1"
      elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1"
      else
        fail "neither curl nor wget is installed" "install one of them, or download the release by hand"
      fi
      ;;
    file://*) cp "${1#file://}" "$2" ;;
    *) cp "$1" "$2" ;;
  esac
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    fail "neither sha256sum nor shasum is installed" "install coreutils"
  fi
}

tmp="$(mktemp -d "${TMPDIR:-/tmp}/cudnnm-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT INT TERM
base="${base%/}"

fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS" ||
  fail "could not download $base/SHA256SUMS" "check the network, or set CUDNNM_INSTALL_BASE to a mirror or folder"
# The newest release for this target named there: HEX  cudnnm-VERSION-TARGET.tar.gz
line="$(grep -E "^[0-9a-fA-F]{64} [ *]cudnnm-[0-9][0-9.]*-$target\.tar\.gz\$" "$tmp/SHA256SUMS" | sort -t - -k 2,2V | tail -n 1 || true)"
[ -n "$line" ] || fail "$base/SHA256SUMS names no cudnnm archive for $target" "set CUDNNM_INSTALL_BASE to a release folder that has one"
want="$(printf '%s\n' "$line" | cut -d ' ' -f 1 | tr 'A-F' 'a-f')"
name="$(printf '%s\n' "$line" | sed 's/^[0-9a-fA-F]* [ *]//')"
version="$(printf '%s\n' "$name" | sed "s/^cudnnm-\\(.*\\)-$target\\.tar\\.gz\$/\\1/")"

say "downloading cudnnm $version for $target from $base"
fetch "$base/$name" "$tmp/$name" || fail "could not download $base/$name" "check the network, then run the installer again"
got="$(sha256_of "$tmp/$name")"
if [ "$got" != "$want" ]; then
  fail "$name does not match SHA256SUMS (expected $want, got $got); nothing was installed" \
    "download again; if it keeps failing, the release folder is damaged or tampered with"
fi

mkdir -p "$tmp/unpacked"
tar -xzf "$tmp/$name" -C "$tmp/unpacked" cudnnm || fail "$name is not a readable cudnnm archive; nothing was installed"
"$tmp/unpacked/cudnnm" --version >/dev/null 2>&1 || fail "the downloaded cudnnm does not run on this machine; nothing was installed" \
  "it needs glibc 2.17 or newer; pip install cudnnm, or build from source"

mkdir -p "$dest" || fail "could not create $dest" "set CUDNNM_INSTALL_DIR to a folder you can write"
# Copy beside the target, then rename: an existing cudnnm is replaced in one step.
cp "$tmp/unpacked/cudnnm" "$dest/.cudnnm.new.$$"
chmod 755 "$dest/.cudnnm.new.$$"
mv -f "$dest/.cudnnm.new.$$" "$dest/cudnnm"
say "installed cudnnm $version to $dest/cudnnm"

case ":${PATH:-}:" in
  *":$dest:"*) ;;
  *)
    say "$dest is not on your PATH; add it (e.g. to ~/.bashrc):"
    printf '  export PATH="%s:$PATH"\n' "$dest" >&2
    ;;
esac
