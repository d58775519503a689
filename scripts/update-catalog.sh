#!/usr/bin/env bash
# Regenerates the machine-written rows of manifest.toml (the [[wheel]] and [[redist]] tables
# between the BEGIN and END GENERATED lines) from the index answers in tests/fixtures/catalog,
# with the generator `cudnnm manifest refresh` uses (src/catalog/generate.rs).
#
#   scripts/update-catalog.sh            fetch PyPI's PEP 691 answers for NVIDIA's five cuDNN
#                                        packages again (trimmed to the fields the catalog reads),
#                                        then regenerate the rows
#   scripts/update-catalog.sh --offline  regenerate from the recorded answers as they are
#   scripts/update-catalog.sh --check    compare instead of writing: exit 1 when manifest.toml's
#                                        rows are not exactly the generator's output
#
# The machine-written `framework` rows (between the BEGIN and END GENERATED FRAMEWORKS lines)
# are then regenerated, with the same flags, by scripts/update-frameworks.py from the framework
# wheels' METADATA (read from PyPI again unless --offline or --check; recorded in
# tests/fixtures/frameworks).
#
# NVIDIA's redistrib_*.json are not fetched (developer.download.nvidia.com is often out of reach):
# to add a release, put a copy of its redistrib_<label>.json in tests/fixtures/catalog/redist/ and
# its public address (a packager's copy at a commit) under [redist] in SOURCES.toml.
# CUDNNM names the cudnnm binary to run (default: `cargo run --quiet --`).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
fixtures="$repo/tests/fixtures/catalog"
offline=0
check=0
for a in "$@"; do
  case "$a" in
    --offline) offline=1 ;;
    --check) check=1 ;;
    *) echo "usage: $0 [--offline] [--check]" >&2; exit 2 ;;
  esac
done

if [ "$offline" = 0 ]; then
  today=$(date -u +%Y-%m-%d)
  for p in nvidia-cudnn-cu11 nvidia-cudnn-cu12 nvidia-cudnn-cu13 nvidia-cudnn-jit-cu12 nvidia-cudnn-jit-cu13; do
    tmp=$(mktemp)
    curl -fsS --proto '=https' -H 'Accept: application/vnd.pypi.simple.v1+json' \
      -o "$tmp" "https://pypi.org/simple/$p/"
    # One file a line, only what the catalog reads: small diffs when PyPI adds a release.
    python3 - "$tmp" "$fixtures/pypi/$p.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
rows = [json.dumps({"filename": f["filename"], "url": f["url"], "hashes": {"sha256": f["hashes"]["sha256"]},
                    "size": f["size"], "yanked": f["yanked"]}) for f in s["files"]]
text = '{\n  "meta": %s,\n  "name": %s,\n  "versions": %s,\n  "files": [\n%s\n  ]\n}\n' % (
    json.dumps(s["meta"]), json.dumps(s["name"]), json.dumps(s["versions"]),
    ",\n".join("    " + r for r in rows))
open(sys.argv[2], "w").write(text)
PY
    rm -f "$tmp"
  done
  sed -i "s/^read = \".*\"$/read = \"$today\"/" "$fixtures/SOURCES.toml"
fi

gen=$(mktemp)
trap 'rm -f "$gen"' EXIT
if [ -n "${CUDNNM:-}" ]; then
  "$CUDNNM" manifest generate --fixtures "$fixtures" >"$gen"
else
  (cd "$repo" && cargo run --quiet -- manifest generate --fixtures "$fixtures") >"$gen"
fi

# Splice the rows between the markers (or append them at the end the first time).
python3 - "$repo/manifest.toml" "$gen" "$check" <<'PY'
import sys
path, gen, check = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
generated = open(gen, encoding="utf-8").read()
text = open(path, encoding="utf-8").read()
lines = generated.splitlines()
begin, end = lines[0], lines[-1]
if begin in text and end in text:
    a = text.index(begin)
    b = text.index(end, a) + len(end) + 1
    new = text[:a] + generated + text[b:]
else:
    new = text.rstrip("\n") + "\n\n" + generated
if check:
    if new != text:
        print("manifest.toml: the generated rows differ from the generator's output; run scripts/update-catalog.sh --offline", file=sys.stderr)
        sys.exit(1)
    print("manifest.toml: generated rows up to date")
elif new != text:
    open(path, "w", encoding="utf-8").write(new)
    print("manifest.toml: generated rows rewritten")
else:
    print("manifest.toml: generated rows unchanged")
PY

# The framework rows: same flags (--check never fetches).
python3 "$repo/scripts/update-frameworks.py" "$@"
