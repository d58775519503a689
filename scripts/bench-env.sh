#!/usr/bin/env bash
# Benchmarks per-process activation: whole-process medians of
# `cudnnm env`, `cudnnm exec -- true`, `cudnnm current` and the shell hook's
# cost per `cd`, with 50 releases in a scratch store, beside `fnm env` when
# fnm is installed, else beside a bare `true` process. Needs hyperfine and
# python3 (for reading hyperfine's JSON). Prints a Markdown table.
#
#   scripts/bench-env.sh            # builds target/release/cudnnm if needed
#   CUDNNM=/path/to/cudnnm scripts/bench-env.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDNNM:-$repo/target/release/cudnnm}
if [[ -z ${CUDNNM-} ]]; then
  (cd "$repo" && cargo build --release --quiet)
fi
runs=${RUNS:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CUDNNM_HOME="$tmp/home"
unset CUDNNM_VERSION

# 50 releases (9.1.0.1 … 9.50.0.1 for CUDA 12), each with a receipt of 25
# file records like a real wheel import, and lib/ + include/ folders.
for n in $(seq 1 50); do
  d="$CUDNNM_HOME/store/cuda-12/9.$n.0.1"
  mkdir -p "$d/lib" "$d/include"
  {
    printf 'schema = 1\nversion = "9.%s.0.1"\ncuda = "12"\nplatform = "linux-x86_64"\n' "$n"
    printf 'header_version = "9.%s.0"\ninstalled_at = "2026-11-29T00:00:00Z"\n\n' "$n"
    printf '[source]\nkind = "wheel"\nname = "nvidia_cudnn_cu12-9.%s.0.1-py3-none-manylinux_2_27_x86_64.whl"\n' "$n"
    printf 'sha256 = "%064d"\nsize = 68475591\n' 0
    for f in $(seq 1 25); do
      printf '\n[[file]]\npath = "lib/libcudnn_part%s.so.9"\nsize = 1048576\nsha256 = "%064d"\n' "$f" "$f"
    done
  } > "$d/receipt.toml"
done
mkdir -p "$tmp/proj a" "$tmp/proj b" "$tmp/plain"
echo 9 > "$tmp/proj a/.cudnn-version"
echo 9.12 > "$tmp/proj b/.cudnn-version"
"$bin" -q default 9.30 >/dev/null

json() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print("\n".join("%s\t%.2f\t%.2f\t%.2f" % (x["command"], x["median"]*1000, x["min"]*1000, x["stddev"]*1000) for x in r))' "$1"; }
bench() { # name, command…
  local name=$1; shift
  hyperfine -N --warmup 20 --runs "$runs" --export-json "$tmp/r.json" -n "$name" "$@" >/dev/null 2>&1 \
    || hyperfine -N --warmup 20 --runs "$runs" -i --export-json "$tmp/r.json" -n "$name" "$@" >/dev/null 2>&1
  json "$tmp/r.json"
}

echo "| command (50 releases installed) | median ms | min ms | stddev ms |"
echo "| --- | ---: | ---: | ---: |"
{
  cd "$tmp/plain"
  bench 'true (bare process)' true
  if command -v fnm >/dev/null; then bench 'fnm env' 'fnm env --shell bash'; fi
  bench 'cudnnm env (default from config.toml)' "$bin env --shell bash"
  cd "$tmp/proj a"
  bench 'cudnnm env (pin "9": newest of 50)' "$bin env --shell bash"
  bench 'cudnnm env --use-on-cd (pin)' "$bin env --shell bash --use-on-cd"
  bench 'cudnnm exec -- true (pin)' "$bin exec -- true"
  if "$bin" current >/dev/null 2>&1; then bench 'cudnnm current (pin)' "$bin current"; fi
  bench 'cudnnm list (reads all 50 receipts)' "$bin list"
} | while IFS=$'\t' read -r name med min sd; do echo "| $name | $med | $min | $sd |"; done

# The hook: 100 changes of folder between two pinned folders, with the hook
# installed versus without; the difference per cd is the hook's cost. A
# prompt without a change of folder is measured as 1000 direct hook calls.
cds=100
cat > "$tmp/with.bash" <<SH
cd "$tmp/plain"; eval "\$('$bin' env --shell bash --use-on-cd)"
for i in \$(seq $((cds / 2))); do cd "$tmp/proj a"; __cudnnm_hook; cd "$tmp/proj b"; __cudnnm_hook; done
SH
cat > "$tmp/without.bash" <<SH
cd "$tmp/plain"; eval "\$('$bin' env --shell bash --use-on-cd)"
for i in \$(seq $((cds / 2))); do cd "$tmp/proj a"; true; cd "$tmp/proj b"; true; done
SH
cat > "$tmp/prompts.bash" <<SH
cd "$tmp/plain"; eval "\$('$bin' env --shell bash --use-on-cd)"
for i in \$(seq 1000); do __cudnnm_hook; done
SH
cat > "$tmp/noprompts.bash" <<SH
cd "$tmp/plain"; eval "\$('$bin' env --shell bash --use-on-cd)"
for i in \$(seq 1000); do true; done
SH
hyperfine -N --warmup 3 --runs 15 --export-json "$tmp/h.json" \
  -n with "bash --norc --noprofile $tmp/with.bash" -n without "bash --norc --noprofile $tmp/without.bash" \
  -n prompts "bash --norc --noprofile $tmp/prompts.bash" -n noprompts "bash --norc --noprofile $tmp/noprompts.bash" >/dev/null 2>&1
python3 - "$tmp/h.json" "$cds" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
cds = int(sys.argv[2])
print("| bash hook, per change of folder (median difference) | %.2f | | |" % ((r["with"] - r["without"]) * 1000 / cds))
print("| bash hook, per prompt without a change of folder | %.4f | | |" % ((r["prompts"] - r["noprompts"]) * 1000 / 1000))
PY
