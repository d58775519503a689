#!/usr/bin/env python3
"""Regenerates the machine-written `framework` rows of manifest.toml (between the BEGIN and
END GENERATED FRAMEWORKS lines) from the METADATA of framework wheels on PyPI.

    scripts/update-frameworks.py            read PyPI again: for each framework below, the
                                            newest final release of every minor line from
                                            `floor` on; record its METADATA headers in
                                            tests/fixtures/frameworks/ (SOURCES.md names the
                                            wheel and the hashes), then regenerate the rows
    scripts/update-frameworks.py --offline  regenerate from the recorded METADATA files
    scripts/update-frameworks.py --check    compare instead of writing (offline, nothing is
                                            fetched or written): exit 1 when the rows in
                                            manifest.toml are not exactly this script's output

`--manifest PATH` works on another copy of manifest.toml (the tests use it).
Called by scripts/update-catalog.sh with the same flags. Python 3 standard library only.

What one METADATA says, and so what a row can hold: the cuDNN from `Requires-Dist:
nvidia-cudnn-cuNN…` (an exact `==` pin is written whole, a range as the major.minor of its
lower bound: the lowest release it accepts), the CUDA from NVIDIA's CUDA runtime requirement
(`nvidia-cuda-runtime[-cuNN]` or the `cuda-toolkit` meta-package torch pins, as major.minor).
A row covers a minor line (`2.15`) and holds the facts of the newest release read in it. Rows
for facts METADATA does not carry (TensorFlow's tested build configurations before its wheels
named cuDNN, PyTorch builds on its own index) stay hand-written in manifest.toml.

Reading METADATA: PEP 658 (`<wheel url>.metadata`, checked against the SHA-256 the index
publishes in `core-metadata`) when the index offers it; otherwise the `*.dist-info/METADATA`
member is read out of the wheel with HTTP range requests (the ZIP's end records, its central
directory, that member and `RECORD`) and checked against the SHA-256 the wheel's own RECORD
lists for it and the member's CRC-32. Every read is bounded; nothing read is executed.
"""

import base64
import hashlib
import json
import os
import re
import struct
import sys
import urllib.request
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "frameworks")
MANIFEST = os.path.join(REPO, "manifest.toml")
SOURCES = os.path.join(FIXTURES, "SOURCES.md")

BEGIN = "  # ═══ BEGIN GENERATED FRAMEWORKS: scripts/update-frameworks.py writes everything down to END; do not edit by hand ═══"
END = "  # ═══ END GENERATED FRAMEWORKS ═══"
SRC_BEGIN = "<!-- BEGIN GENERATED: scripts/update-frameworks.py writes this table -->"
SRC_END = "<!-- END GENERATED -->"

# (PyPI name, catalog name, extra columns of the row, the extras whose requirements count,
#  the first minor line the generated rows cover: older lines are hand-written rows)
FRAMEWORKS = [
    ("torch", "pytorch", [("channel", "stable")], (), (2, 13)),
    ("tensorflow", "tensorflow", [("os", "linux")], ("and-cuda",), (2, 21)),
    ("onnxruntime-gpu", "onnxruntime", [], ("cuda", "cudnn"), (1, 31)),
    ("jax-cuda13-plugin", "jax-cuda13-plugin", [("os", "linux")], ("with-cuda",), (0, 12)),
    ("jax-cuda12-plugin", "jax-cuda12-plugin", [("os", "linux")], ("with-cuda",), (0, 12)),
]

MAX_INDEX = 64 << 20  # a PEP 691 answer (torch's lists ~1,000 files in ~1 MB)
MAX_CD = 64 << 20  # a wheel's central directory
MAX_MEMBER = 32 << 20  # METADATA or RECORD, compressed or not
MAX_HEADERS = 256 << 10  # the METADATA headers kept as a fixture
FINAL = re.compile(r"\d+(\.\d+)*")


class Fail(Exception):
    pass


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def line_of(v):
    return vkey(v)[:2]


# ── reading PyPI ────────────────────────────────────────────────────────────────────────────


def get(url, headers=None, limit=MAX_MEMBER, rng=None):
    if not url.startswith("https://"):
        raise Fail(f"{url}: not an HTTPS URL")
    h = dict(headers or {})
    h["User-Agent"] = "cudnnm-update-frameworks"
    if rng:
        h["Range"] = "bytes=%d-%d" % rng
    with urllib.request.urlopen(urllib.request.Request(url, headers=h), timeout=120) as r:
        if rng and r.status != 206:
            raise Fail(f"{url}: answered {r.status} to a range request")
        body = r.read(limit + 1)
    if len(body) > limit:
        raise Fail(f"{url}: more than {limit} bytes")
    if rng and len(body) != rng[1] - rng[0] + 1:
        raise Fail(f"{url}: a range of {len(body)} bytes, not {rng[1] - rng[0] + 1}")
    return body


def pick_wheel(files, version):
    """The Linux x86_64 manylinux wheel of `version`: cp312 when there is one."""
    ws = [f for f in files if f["filename"].endswith(".whl") and not f.get("yanked")
          and f["filename"].split("-")[1] == version
          and re.search(r"manylinux\w*_x86_64\.whl$", f["filename"])]
    ws.sort(key=lambda f: ("-cp312-cp312-" not in f["filename"], f["filename"]))
    if not ws:
        raise Fail(f"no manylinux x86_64 wheel of {version}")
    return ws[0]


def zip_member_names(url, size):
    tail_len = min(size, 65536 + 22)
    tail = get(url, rng=(size - tail_len, size - 1), limit=tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0:
        raise Fail(f"{url}: no ZIP end record")
    cd_size, cd_off = struct.unpack_from("<II", tail, at + 12)
    if cd_off == 0xFFFFFFFF or cd_size == 0xFFFFFFFF:  # ZIP64
        loc = tail.rfind(b"PK\x06\x07", 0, at)
        if loc < 0:
            raise Fail(f"{url}: no ZIP64 locator")
        (z64,) = struct.unpack_from("<Q", tail, loc + 8)
        rec = get(url, rng=(z64, z64 + 55), limit=56)
        cd_size, cd_off = struct.unpack_from("<QQ", rec, 40)
    if cd_size > MAX_CD or cd_off + cd_size > size:
        raise Fail(f"{url}: a central directory of {cd_size} bytes")
    cd = get(url, rng=(cd_off, cd_off + cd_size - 1), limit=cd_size)
    out, i = {}, 0
    while i + 46 <= len(cd) and cd[i:i + 4] == b"PK\x01\x02":
        method, _, _, crc, csize, usize, nlen, xlen, clen = struct.unpack_from("<HHHIIIHHH", cd, i + 10)
        (off,) = struct.unpack_from("<I", cd, i + 42)
        name = cd[i + 46:i + 46 + nlen].decode("utf-8", "replace")
        extra = cd[i + 46 + nlen:i + 46 + nlen + xlen]
        j = 0
        while j + 4 <= len(extra):  # ZIP64 extended information
            tag, ln = struct.unpack_from("<HH", extra, j)
            if tag == 1:
                vals = list(struct.unpack_from("<%dQ" % (ln // 8), extra, j + 4))
                if usize == 0xFFFFFFFF:
                    usize = vals.pop(0)
                if csize == 0xFFFFFFFF:
                    csize = vals.pop(0)
                if off == 0xFFFFFFFF:
                    off = vals.pop(0)
            j += 4 + ln
        out[name] = (method, crc, csize, usize, off)
        i += 46 + nlen + xlen + clen
    return out


def zip_member(url, size, entry):
    method, crc, csize, usize, off = entry
    if csize > MAX_MEMBER or usize > MAX_MEMBER:
        raise Fail(f"{url}: a member of {usize} bytes")
    head = get(url, rng=(off, off + 29), limit=30)
    if head[:4] != b"PK\x03\x04":
        raise Fail(f"{url}: no local header at {off}")
    nlen, xlen = struct.unpack_from("<HH", head, 26)
    start = off + 30 + nlen + xlen
    data = get(url, rng=(start, start + csize - 1), limit=csize) if csize else b""
    if method == 8:
        d = zlib.decompressobj(-15)
        data = d.decompress(data, usize + 1)
    elif method != 0:
        raise Fail(f"{url}: compression method {method}")
    if len(data) != usize or zlib.crc32(data) != crc:
        raise Fail(f"{url}: a member whose size or CRC-32 is not the central directory's")
    return data


def read_metadata(f):
    """The wheel's METADATA bytes and how they were checked."""
    url = f["url"]
    cm = f.get("core-metadata") or f.get("data-dist-info-metadata")
    if isinstance(cm, dict) and cm.get("sha256"):
        data = get(url + ".metadata")
        if hashlib.sha256(data).hexdigest() != cm["sha256"]:
            raise Fail(f"{url}.metadata: not the SHA-256 the index publishes")
        return data, "PEP 658 file, SHA-256 from the index"
    names = zip_member_names(url, f["size"])
    top = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
    if len(top) != 1:
        raise Fail(f"{url}: {len(top)} top-level .dist-info/METADATA members")
    meta_name = top[0]
    record_name = meta_name[: -len("METADATA")] + "RECORD"
    if record_name not in names:
        raise Fail(f"{url}: no {record_name}")
    data = zip_member(url, f["size"], names[meta_name])
    record = zip_member(url, f["size"], names[record_name]).decode("utf-8")
    want = None
    for row in record.splitlines():
        parts = row.rsplit(",", 2)
        if len(parts) == 3 and parts[0] == meta_name and parts[1].startswith("sha256="):
            want = parts[1][len("sha256="):]
    got = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    if want is None or want != got:
        raise Fail(f"{url}: METADATA is not the SHA-256 its RECORD lists")
    return data, "read from the wheel (range requests), SHA-256 checked against its RECORD"


def headers_of(data):
    """METADATA up to the first blank line (the long description is dropped)."""
    text = data.decode("utf-8").replace("\r\n", "\n")
    head = text.split("\n\n", 1)[0] + "\n"
    if len(head) > MAX_HEADERS:
        raise Fail(f"METADATA headers of {len(head)} bytes")
    return head


def fetch_all(today):
    rows = []
    for pypi, _, _, _, floor in FRAMEWORKS:
        url = f"https://pypi.org/simple/{pypi}/"
        idx = json.loads(get(url, {"Accept": "application/vnd.pypi.simple.v1+json"}, MAX_INDEX))
        finals = [v for v in idx["versions"] if FINAL.fullmatch(v) and line_of(v) >= floor]
        newest = {}
        for v in finals:
            if any(f["filename"].split("-")[1] == v for f in idx["files"]):
                if vkey(v) > vkey(newest.get(line_of(v), "0")):
                    newest[line_of(v)] = v
        for line in sorted(newest):
            v = newest[line]
            f = pick_wheel(idx["files"], v)
            data, how = read_metadata(f)
            head = headers_of(data)
            meta = parse(head)
            if norm(meta["name"]) != norm(pypi) or meta["version"] != v:
                raise Fail(f"{f['filename']}: METADATA names {meta['name']} {meta['version']}")
            fixture = f"{norm(pypi).replace('-', '_')}-{v}.METADATA"
            with open(os.path.join(FIXTURES, fixture), "w", encoding="utf-8") as out:
                out.write(head)
            rows.append((fixture, f["filename"], f["url"], f["hashes"]["sha256"],
                         hashlib.sha256(data).hexdigest(), how))
            print(f"{pypi} {v}: {f['filename']} ({how})", file=sys.stderr)
    table = [SRC_BEGIN, "",
             f"Read on {today} by `scripts/update-frameworks.py` (the newest release of each minor line",
             "the generated `framework` rows cover). `METADATA sha256` is that of the whole member, before",
             "the long description was dropped.", "",
             "| fixture | wheel | wheel sha256 (PyPI) | METADATA sha256 | checked |",
             "| --- | --- | --- | --- | --- |"]
    for fx, fn, url, wsha, msha, how in rows:
        table.append(f"| `{fx}` | [{fn}]({url}) | `{wsha}` | `{msha}` | {how} |")
    table += ["", SRC_END]
    text = open(SOURCES, encoding="utf-8").read()
    block = "\n".join(table) + "\n"
    if SRC_BEGIN in text and SRC_END in text:
        a = text.index(SRC_BEGIN)
        b = text.index(SRC_END, a) + len(SRC_END) + 1
        text = text[:a] + block + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(SOURCES, "w", encoding="utf-8") as out:
        out.write(text)


# ── METADATA to rows ────────────────────────────────────────────────────────────────────────


def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def parse(text):
    meta = {"requires": []}
    for raw in text.split("\n\n", 1)[0].splitlines():
        key, _, value = raw.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "name":
            meta["name"] = value
        elif key == "version":
            meta["version"] = value
        elif key == "requires-dist":
            meta["requires"].append(value)
    if "name" not in meta or "version" not in meta:
        raise Fail("a METADATA without Name or Version")
    return meta


REQ = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?([^;()]*)\)?\s*(?:;(.*))?$")


def applies(marker, extras_used):
    """True when a requirement counts for a Linux x86_64 install with `extras_used`."""
    if not marker:
        return True
    extras = re.findall(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
    if extras and not set(extras) & set(extras_used):
        return False
    for m in re.findall(r"(?:platform_system|sys_platform)\s*==\s*['\"]([^'\"]+)['\"]", marker):
        if m.lower() not in ("linux",):
            return False
    return True


def specs(text):
    return [(m.group(1), m.group(2).strip()) for m in re.finditer(r"(===|==|~=|>=|<=|!=|<|>)\s*([^,\s]+)", text)]


def majmin(v):
    return ".".join(v.split(".")[:2])


def derive(meta, extras):
    """(cuda, cudnn, the requirements they come from) for one METADATA."""
    cudnn = cuda = None
    used = []
    for r in meta["requires"]:
        m = REQ.match(r)
        if not m or not applies(m.group(4), extras):
            continue
        name, sp = norm(m.group(1)), specs(m.group(3))
        if re.fullmatch(r"nvidia-cudnn-cu\d+", name) and cudnn is None:
            pin = [v for op, v in sp if op == "=="]
            low = [v for op, v in sp if op in (">=", "~=")]
            if pin:
                cudnn = pin[0]
            elif low:
                cudnn = majmin(low[0])
            else:
                continue
            used.append(f"{name}{m.group(3).strip().replace(' ', '')}")
        elif (re.fullmatch(r"nvidia-cuda-runtime(-cu\d+)?", name)
              or (name == "cuda-toolkit" and "cudart" in (m.group(2) or ""))) and cuda is None:
            vs = [v for op, v in sp if op in ("==", ">=", "~=")]
            if not vs:
                continue
            cuda = majmin(vs[0])
            short = "cuda-toolkit[cudart]" if name == "cuda-toolkit" else name
            used.append(f"{short}{','.join(op + v for op, v in sp if op in ('==', '>=', '~='))}")
    return cuda, cudnn, used


def recorded():
    """The newest recorded METADATA of each (framework, minor line) from its floor on."""
    best = {}
    for fn in sorted(os.listdir(FIXTURES)):
        if not fn.endswith(".METADATA"):
            continue
        meta = parse(open(os.path.join(FIXTURES, fn), encoding="utf-8").read())
        for pypi, *_rest, floor in FRAMEWORKS:
            if norm(meta["name"]) == pypi and FINAL.fullmatch(meta["version"]):
                key = (pypi, line_of(meta["version"]))
                if key[1] >= floor and (key not in best or vkey(meta["version"]) > vkey(best[key]["version"])):
                    best[key] = meta
    return best


def rows():
    best = recorded()
    out = [BEGIN,
           "  # One row per minor line, from the METADATA of its newest release on PyPI (recorded in",
           "  # tests/fixtures/frameworks/, SOURCES.md names each wheel and its hashes).",
           ]
    for pypi, cat, cols, extras, _ in FRAMEWORKS:
        for (p, line) in sorted((k for k in best if k[0] == pypi), key=lambda k: k[1], reverse=True):
            meta = best[(p, line)]
            cuda, cudnn, used = derive(meta, extras)
            if cuda is None or cudnn is None:
                raise Fail(f"{pypi} {meta['version']}: its METADATA names no "
                           f"{'CUDA runtime' if cuda is None else 'cuDNN'} requirement; write the row by hand")
            ln = "%d.%d" % line
            fields = [f'name = "{cat}"'] + [f'{k} = "{v}"' for k, v in cols] + [
                f'versions = ["{ln}", "{ln}"]', f'cuda = "{cuda}"', f'cudnn = "{cudnn}"',
                f'source = "https://pypi.org/project/{pypi}/{meta["version"]}/ (wheel METADATA: {", ".join(used)})"']
            out.append("  { " + ", ".join(fields) + " },")
    out.append(END)
    return "\n".join(out) + "\n"


def main():
    args, manifest = sys.argv[1:], MANIFEST
    if "--manifest" in args:
        i = args.index("--manifest")
        if i + 1 >= len(args):
            args.append("")
        manifest = args.pop(i + 1)
        args.pop(i)
    if not manifest or any(a not in ("--offline", "--check") for a in args):
        print(f"usage: {sys.argv[0]} [--offline] [--check] [--manifest PATH]", file=sys.stderr)
        return 2
    try:
        if "--offline" not in args and "--check" not in args:
            import datetime
            fetch_all(datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"))
        generated = rows()
    except (Fail, OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    text = open(manifest, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        print("error: manifest.toml has no BEGIN/END GENERATED FRAMEWORKS lines inside `framework = [`", file=sys.stderr)
        return 1
    a = text.index(BEGIN)
    b = text.index(END, a) + len(END) + 1
    new = text[:a] + generated + text[b:]
    if "--check" in args:
        if new != text:
            print(f"{manifest}: the generated framework rows differ from the recorded METADATA; "
                  "run scripts/update-catalog.sh --offline", file=sys.stderr)
            return 1
        print("manifest.toml: generated framework rows up to date")
    elif new != text:
        with open(manifest, "w", encoding="utf-8") as out:
            out.write(new)
        print("manifest.toml: generated framework rows rewritten")
    else:
        print("manifest.toml: generated framework rows unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
