#!/usr/bin/env bash
# Times `cudnnm doctor` (and `cudnnm verify`) on a sandbox machine with five
# CUDA toolkits and ten store releases, built from the real cuDNN wheels that
# scripts/fetch-test-wheels.sh fetches: every toolkit holds a real cuDNN 9
# set (9.27 or 9.12, with a soname chain), cudnnm deployed a release into each
# (symlinks into the store), and three toolkits are on LD_LIBRARY_PATH, so
# doctor examines and loads several copies of libcudnn.so.9.
#
# Usage: scripts/bench-doctor.sh [runs]   (needs a built target/release/cudnnm
# or target/debug/cudnnm, python3 for unzipping and receipts)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
bin="$repo/target/release/cudnnm"
[ -x "$bin" ] || bin="$repo/target/debug/cudnnm"
[ -x "$bin" ] || { echo "build cudnnm first (cargo build --release)" >&2; exit 1; }
wheels="${CUDNNM_TEST_WHEELS:-$repo/.cache/wheels}"
work=$(mktemp -d "${TMPDIR:-/tmp}/cudnnm-bench-XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

python3 - "$wheels" "$work" <<'PY'
import hashlib, json, os, sys, zipfile, glob
wheels, work = sys.argv[1], sys.argv[2]
home = os.path.join(work, "home")
src = {}
for ver in ["9.27.0.42", "9.12.0.46"]:
    whl = glob.glob(os.path.join(wheels, f"nvidia_cudnn_jit_cu12-{ver}-*.whl"))
    if not whl:
        sys.exit(f"missing wheel {ver}: run scripts/fetch-test-wheels.sh")
    d = os.path.join(work, "wheel", ver)
    with zipfile.ZipFile(whl[0]) as z:
        for n in z.namelist():
            for sub in ("lib", "include"):
                p = f"nvidia/cudnn_jit/{sub}/"
                if n.startswith(p) and not n.endswith(".py") and not n.endswith("/"):
                    out = os.path.join(d, sub, n[len(p):])
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    with z.open(n) as i, open(out, "wb") as o:
                        o.write(i.read())
    src[ver] = d

def sha(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()

hashes = {}
# Ten releases: the two real builds, each under five version ids.
releases = []
for i in range(10):
    ver = ["9.27.0.42", "9.12.0.46"][i % 2]
    rid = f"9.{27 if i % 2 == 0 else 12}.{i // 2}.{42 + i}"
    rdir = os.path.join(home, "store", "cuda-12", rid)
    files = []
    for sub in ("include", "lib"):
        os.makedirs(os.path.join(rdir, sub), exist_ok=True)
        for n in sorted(os.listdir(os.path.join(src[ver], sub))):
            s = os.path.join(src[ver], sub, n)
            dst = os.path.join(rdir, sub, n)
            os.link(s, dst)
            if s not in hashes:
                hashes[s] = sha(s)
            files.append((f"{sub}/{n}", os.path.getsize(s), hashes[s], None))
    os.symlink("libcudnn.so.9", os.path.join(rdir, "lib", "libcudnn.so"))
    files.append(("lib/libcudnn.so", 0, None, "libcudnn.so.9"))
    files.sort()
    hv = "9.27.0" if ver.startswith("9.27") else "9.12.0"
    with open(os.path.join(rdir, "receipt.toml"), "w") as f:
        f.write(f'schema = 1\nversion = "{rid}"\ncuda = "12"\nplatform = "linux-x86_64"\nheader_version = "{hv}"\ninstalled_at = "2026-11-29T21:00:00Z"\n\n[source]\nkind = "wheel"\nname = "bench"\nsize = 0\n')
        for p, size, h, link in files:
            f.write(f'\n[[file]]\npath = "{p}"\nsize = {size}\n')
            if h:
                f.write(f'sha256 = "{h}"\n')
            if link:
                f.write(f'link = "{link}"\n')
    releases.append((rid, rdir, files))

# Five toolkits, one release deployed into each (symlinks into the store).
deps = []
for t in range(5):
    rid, rdir, files = releases[t]
    tk = os.path.join(work, f"cuda-12.{t}")
    os.makedirs(os.path.join(tk, "include"))
    os.makedirs(os.path.join(tk, "lib64"))
    with open(os.path.join(tk, "version.json"), "w") as f:
        json.dump({"cuda": {"name": "CUDA SDK", "version": f"12.{t}.0"}}, f)
    placed = []
    for p, size, h, link in files:
        sub, n = p.split("/", 1)
        dst = os.path.join(tk, "lib64" if sub == "lib" else "include", n)
        target = link or os.path.join(rdir, p)
        os.symlink(target, dst)
        placed.append((dst, p, target))
    deps.append((tk, rid, placed))
with open(os.path.join(home, "deployments.toml"), "w") as f:
    for tk, rid, placed in deps:
        f.write(f'[[deployment]]\ntoolkit = "{tk}"\nrelease = "{rid}_cuda12"\nmode = "symlink"\ndeployed_at = "2026-11-29T21:01:00Z"\n')
        for dst, frm, target in placed:
            f.write(f'\n[[deployment.file]]\npath = "{dst}"\nfrom = "{frm}"\nlink = "{target}"\n')
        f.write("\n")
PY

export CUDNNM_HOME="$work/home"
export LD_LIBRARY_PATH="$work/cuda-12.0/lib64:$work/cuda-12.1/lib64:$work/cuda-12.2/lib64"
roots=()
for t in 0 1 2 3 4; do roots+=(--cuda-root "$work/cuda-12.$t"); done

time_ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }

"$bin" doctor "${roots[@]}" >/dev/null 2>&1 || true # warm the page cache
echo "binary: $bin"
echo "toolkits: 5, store releases: $(ls "$work/home/store/cuda-12" | wc -l), copies of libcudnn.so.9 on LD_LIBRARY_PATH: 3"
all=()
for i in $(seq "$runs"); do all+=("$(time_ms "$bin" doctor "${roots[@]}")"); done
echo "doctor (ms, $runs runs): ${all[*]}"
nl=()
for i in $(seq "$runs"); do nl+=("$(time_ms "$bin" doctor --no-load "${roots[@]}")"); done
echo "doctor --no-load (ms): ${nl[*]}"
"$bin" doctor --json --report "$work/report.json" "${roots[@]}" >/dev/null 2>&1 || true
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("doctor phases (ms):", ", ".join(f"{k} {v}" for k,v in r["snapshot"]["timings_ms"])); print("findings:", ", ".join(sorted({f["id"] for f in r["findings"]})) or "none")' "$work/report.json"
echo "verify (ms, hashes every byte of 10 releases and 5 deployments): $(time_ms "$bin" verify)"
