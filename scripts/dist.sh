#!/usr/bin/env bash
# usage: scripts/dist.sh VERSION
#
# Builds the release artifacts of cudnnm VERSION into dist/ (the single
# source of truth: .github/workflows/release.yml only calls this):
#   cudnnm-VERSION-x86_64-unknown-linux-gnu.tar.gz   glibc 2.17 (cargo-zigbuild)
#   cudnnm-VERSION-aarch64-unknown-linux-gnu.tar.gz  glibc 2.17 (cargo-zigbuild)
#   cudnnm-VERSION-x86_64-pc-windows-gnu.zip         cudnnm.exe, C runtime static
#   cudnnm-VERSION-py3-none-*.whl                    manylinux_2_17 x86_64/aarch64, win_amd64
#                                                    (maturin, bindings = "bin", no self update)
#   SHA256SUMS, install.sh, install.ps1, cudnnm.json (Scoop), winget/ (winget manifests)
#
# DIST_TARGETS (comma-separated) builds a subset: x86_64-linux, aarch64-linux,
# windows, wheel-x86_64, wheel-aarch64, wheel-windows (default: all).
# DIST_REPO (owner/name, default: default_repo below) names the GitHub
# repository whose release downloads the artifacts point at: the Scoop and
# winget manifests' URLs, the default base of the released install.sh and
# install.ps1, and the binary's `self update` default (CUDNNM_RELEASE_BASE at
# build time), so that a fork's release points at the fork.
#
# Needs: cargo-zigbuild and ziglang, maturin and auditwheel (from PyPI: this
# script puts them in a venv of its own, DIST_TOOLS, default
# ~/.cache/cudnnm/dist-tools, the first time and reuses it), python3 with
# venv, the rustup targets (added as needed), and for Windows
# gcc-mingw-w64-x86-64 (checked before any build, with the command that
# installs it). Build times per target go to target/dist-times.txt.
# DIST_KEEP=1 keeps what dist/ already holds and adds the targets asked for.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:?usage: scripts/dist.sh VERSION}"
crate_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)"
if [ "$version" != "$crate_version" ]; then
  echo "error: VERSION $version differs from Cargo.toml's version $crate_version" >&2
  echo "help: set version = \"$version\" in Cargo.toml first (the binary reports that one)" >&2
  exit 2
fi
targets=",${DIST_TARGETS:-x86_64-linux,aarch64-linux,windows,wheel-x86_64,wheel-aarch64,wheel-windows},"
# The project's GitHub repository: the one place this script names it.
default_repo=cudnnm/cudnnm
repo="${DIST_REPO:-$default_repo}"
release_base="https://github.com/$repo/releases/latest/download"
export CUDNNM_RELEASE_BASE="$release_base"
dist=dist
glibc_max=2.17
want() { [[ "$targets" == *",$1,"* ]]; }

# The build tools, before anything is built: a fresh clone needs nothing but
# Rust, python3 (with venv) and, for Windows, mingw.
need_tools() { # the PyPI tools, in DIST_TOOLS unless already on PATH
  local tools="${DIST_TOOLS:-$HOME/.cache/cudnnm/dist-tools}" missing=0
  if [ -x "$tools/bin/python3" ]; then export PATH="$tools/bin:$PATH"; fi
  command -v cargo-zigbuild >/dev/null || missing=1
  command -v maturin >/dev/null || missing=1
  command -v auditwheel >/dev/null || missing=1
  # cargo-zigbuild runs zig from PATH or `python3 -m ziglang` (the venv's python3 comes first).
  python3 -c 'import ziglang' 2>/dev/null || command -v zig >/dev/null || missing=1
  [ "$missing" = 1 ] || return 0
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    echo "error: python3 cannot make a venv for the build tools (cargo-zigbuild, ziglang, maturin, auditwheel)" >&2
    echo "help: sudo apt-get install python3-venv (Debian/Ubuntu), then run scripts/dist.sh again" >&2
    exit 1
  fi
  echo "dist: installing the build tools into $tools (pip install ziglang cargo-zigbuild maturin auditwheel)" >&2
  rm -rf "$tools"
  python3 -m venv "$tools"
  "$tools/bin/pip" install -q ziglang cargo-zigbuild maturin auditwheel
  export PATH="$tools/bin:$PATH"
}
need_tools
if want windows || want wheel-windows; then
  command -v x86_64-w64-mingw32-gcc >/dev/null || {
    echo "error: the Windows build needs the mingw-w64 C cross-compiler (x86_64-w64-mingw32-gcc)" >&2
    echo "help: sudo apt-get install gcc-mingw-w64-x86-64, or leave Windows out: DIST_TARGETS=x86_64-linux,aarch64-linux,wheel-x86_64,wheel-aarch64" >&2
    exit 1
  }
fi

# DIST_KEEP=1 adds to an existing dist/ (build targets one at a time);
# otherwise dist/ starts empty.
[ "${DIST_KEEP:-}" = 1 ] || rm -rf "$dist"
mkdir -p "$dist" target
times=target/dist-times.txt
[ "${DIST_KEEP:-}" = 1 ] || : >"$times"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

timed() { # timed LABEL COMMAND...: runs COMMAND, records its wall time
  local label="$1" start end
  shift
  start=$(date +%s)
  "$@"
  end=$(date +%s)
  echo "$label: $((end - start)) s" | tee -a "$times" >&2
}

ensure_target() {
  rustup target list --installed | grep -qx "$1" || rustup target add "$1"
}

# A tarball: the binary at the top level, with the README.
linux_tarball() { # linux_tarball ARCH
  local triple="$1-unknown-linux-gnu" dir="$stage/$1"
  ensure_target "$triple"
  # The .2.17 suffix makes zig link against glibc 2.17's symbol versions.
  cargo zigbuild --release --locked --target "$triple.$glibc_max"
  mkdir -p "$dir"
  cp "target/$triple/release/cudnnm" "$dir/cudnnm"
  scripts/check-glibc.sh "$dir/cudnnm" "$glibc_max" | tee -a "$times"
  cp README.md "$dir/"
  tar --owner=0 --group=0 --numeric-owner -C "$dir" -czf "$dist/cudnnm-$version-$triple.tar.gz" cudnnm README.md
}

windows_zip() {
  local triple=x86_64-pc-windows-gnu dir="$stage/windows"
  ensure_target "$triple"
  cargo build --release --locked --target "$triple"
  mkdir -p "$dir"
  cp "target/$triple/release/cudnnm.exe" README.md "$dir/"
  (cd "$dir" && python3 -m zipfile -c "$OLDPWD/$dist/cudnnm-$version-$triple.zip" cudnnm.exe README.md)
}

# Wheels: maturin reads pyproject.toml (bindings = "bin", no default features).
wheel() { # wheel TRIPLE [maturin options]
  local triple="$1"
  shift
  ensure_target "$triple"
  maturin build --release --locked --target "$triple" --out "$dist" "$@"
}

want x86_64-linux && timed "x86_64-unknown-linux-gnu tarball" linux_tarball x86_64
want aarch64-linux && timed "aarch64-unknown-linux-gnu tarball" linux_tarball aarch64
want windows && timed "x86_64-pc-windows-gnu zip" windows_zip
want wheel-x86_64 && timed "wheel manylinux_2_17_x86_64" wheel x86_64-unknown-linux-gnu --zig --compatibility manylinux2014
want wheel-aarch64 && timed "wheel manylinux_2_17_aarch64" wheel aarch64-unknown-linux-gnu --zig --compatibility manylinux2014
want wheel-windows && timed "wheel win_amd64" wheel x86_64-pc-windows-gnu

# The Linux wheels: the policy auditwheel sees, and the glibc floor of the binary inside.
for whl in "$dist"/*manylinux*.whl; do
  [ -e "$whl" ] || continue
  command -v auditwheel >/dev/null ||
    { echo "error: auditwheel is not installed; it checks the Linux wheels" >&2; echo "help: pip install auditwheel" >&2; exit 1; }
  auditwheel show "$whl" | tee -a "$times"
  # Accepted: the most compatible tag auditwheel finds is manylinux_2_N with N <= 17.
  tag="$(auditwheel show --json "$whl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["overall_tag"])')"
  minor="$(sed -n 's/^manylinux_2_\([0-9]*\)_.*/\1/p' <<<"$tag")"
  if [ -z "$minor" ] || [ "$minor" -gt "${glibc_max#2.}" ]; then
    echo "error: auditwheel does not accept $whl as manylinux_${glibc_max/./_} (it says: $tag)" >&2
    exit 1
  fi
  echo "auditwheel: $(basename "$whl"): $tag: ok" | tee -a "$times"
  rm -rf "$stage/whl" && mkdir -p "$stage/whl"
  python3 -m zipfile -e "$whl" "$stage/whl"
  scripts/check-glibc.sh "$(find "$stage/whl" -name cudnnm -type f)" "$glibc_max" | tee -a "$times"
done

# The install scripts, with their one release_base line naming $repo's releases.
stamp() { # stamp FILE SED-EXPR: copies FILE into dist/, changing exactly one line
  sed "$2" "$1" >"$dist/$1"
  [ "$(diff "$1" "$dist/$1" | grep -c '^>')" -le 1 ] && grep -qF "'$release_base'" "$dist/$1" ||
    { echo "error: could not set the release base in $dist/$1" >&2; exit 1; }
}
stamp install.sh "s|^release_base='.*'\$|release_base='$release_base'|"
stamp install.ps1 "s|^\$ReleaseBase = '.*'\$|\$ReleaseBase = '$release_base'|"
(cd "$dist" && sha256sum -- cudnnm-* >SHA256SUMS)

# Scoop and winget manifests for the Windows zip, with its release URL and hash.
zip_name="cudnnm-$version-x86_64-pc-windows-gnu.zip"
if [ -e "$dist/$zip_name" ]; then
  url="https://github.com/$repo/releases/download/v$version/$zip_name"
  sha="$(sha256sum "$dist/$zip_name" | cut -d' ' -f1)"
  cat >"$dist/cudnnm.json" <<JSON
{
    "version": "$version",
    "description": "Install, switch, pin and diagnose many NVIDIA cuDNN versions on one machine",
    "homepage": "https://github.com/$repo",
    "license": "MIT OR Apache-2.0",
    "architecture": {
        "64bit": {
            "url": "$url",
            "hash": "$sha"
        }
    },
    "bin": "cudnnm.exe",
    "checkver": {
        "github": "https://github.com/$repo"
    },
    "autoupdate": {
        "architecture": {
            "64bit": {
                "url": "https://github.com/$repo/releases/download/v\$version/cudnnm-\$version-x86_64-pc-windows-gnu.zip"
            }
        },
        "hash": {
            "url": "https://github.com/$repo/releases/download/v\$version/SHA256SUMS"
        }
    }
}
JSON
  id="cudnnm.cudnnm"
  wdir="$dist/winget/manifests/c/cudnnm/cudnnm/$version"
  mkdir -p "$wdir"
  cat >"$wdir/$id.yaml" <<YAML
PackageIdentifier: $id
PackageVersion: $version
DefaultLocale: en-US
ManifestType: version
ManifestVersion: 1.6.0
YAML
  cat >"$wdir/$id.installer.yaml" <<YAML
PackageIdentifier: $id
PackageVersion: $version
InstallerType: zip
NestedInstallerType: portable
NestedInstallerFiles:
  - RelativeFilePath: cudnnm.exe
    PortableCommandAlias: cudnnm
Installers:
  - Architecture: x64
    InstallerUrl: $url
    InstallerSha256: ${sha^^}
ManifestType: installer
ManifestVersion: 1.6.0
YAML
  cat >"$wdir/$id.locale.en-US.yaml" <<YAML
PackageIdentifier: $id
PackageVersion: $version
PackageLocale: en-US
Publisher: cudnnm
PackageName: cudnnm
License: MIT OR Apache-2.0
ShortDescription: Install, switch, pin and diagnose many NVIDIA cuDNN versions on one machine
PackageUrl: https://github.com/$repo
Moniker: cudnnm
ManifestType: defaultLocale
ManifestVersion: 1.6.0
YAML
fi

echo "dist/ for cudnnm $version:" >&2
(cd "$dist" && ls -l --block-size=K cudnnm-* SHA256SUMS) >&2
cat "$times" >&2
