#!/usr/bin/env python3
"""Serve one file over HTTP on 127.0.0.1 at a fixed bandwidth, for the
download benchmarks (scripts/bench-download.sh, scripts/bench-index.sh).

    throttle-server.py FILE [--port N] [--mbps 50] [--port-file PATH]
                            [--index PROJECT] [--log PATH]

GET /<file name> answers the file (200, or 206 for `Range: bytes=N-` and
`bytes=N-M`; 416 past its end); any other path is 404. Each response is
paced on its own: a token bucket of MBPS megabytes (10^6 bytes) a second
holding at most 256 KiB, so a client that stalls gets no catch-up burst
beyond that, as from a real link. Port 0 (the default) picks a free port,
printed on the first line of stdout (and written to --port-file).

With --index PROJECT it is also a package index of that one project and
that one file (the simple API): GET /simple/ lists the project, and
GET /simple/<project>/ its page, which links the file at
../../files/<file name> (also served there, paced alike) with its
SHA-256 (computed once at start) and size. The page is PEP 691 JSON
(`application/vnd.pypi.simple.v1+json`, api-version 1.1 with PEP 700's
`size` and `versions`) when the Accept header prefers that, else the
PEP 503 HTML link list with a `#sha256=` fragment. Project names compare
normalized (PEP 503: runs of `-_.` are one `-`, case ignored).
--log PATH appends one line per request: method, path, and the Range
header when there is one.

Loopback only; it never connects anywhere.
"""

import argparse
import hashlib
import html
import http.server
import json
import os
import re
import socketserver
import sys
import threading
import time

CHUNK = 64 * 1024
BURST = 256 * 1024
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPE = "application/vnd.pypi.simple.v1+html"


def normalize(project):
    """PEP 503's normalized project name."""
    return re.sub(r"[-_.]+", "-", project).lower()


def wants_json(accept):
    """Whether an Accept header ranks PEP 691 JSON above every HTML form
    (no header, or one naming neither, means HTML: PEP 503's default)."""
    best = {"json": -1.0, "html": -1.0}
    for part in (accept or "").split(","):
        fields = [f.strip() for f in part.split(";")]
        kind = fields[0].lower()
        q = 1.0
        for f in fields[1:]:
            if f.lower().startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        if kind == JSON_TYPE:
            best["json"] = max(best["json"], q)
        elif kind in (HTML_TYPE, "text/html", "*/*"):
            best["html"] = max(best["html"], q)
    return best["json"] > 0 and best["json"] >= best["html"]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    path_served = ""
    name = ""
    rate = 50e6
    project = None  # normalized, with --index
    sha256 = ""
    log_path = None
    log_lock = threading.Lock()

    def log_message(self, *args):  # quiet
        pass

    def do_HEAD(self):
        self.route(body=False)

    def do_GET(self):
        self.route(body=True)

    def log_request_line(self):
        if not self.log_path:
            return
        line = f"{self.command} {self.path}"
        rng = self.headers.get("Range")
        if rng:
            line += f" Range: {rng}"
        with self.log_lock, open(self.log_path, "a") as f:
            f.write(line + "\n")

    def route(self, body):
        self.log_request_line()
        path = self.path.split("?")[0]
        if path.lstrip("/") == self.name:
            return self.serve_file(body)
        if self.project is not None:
            if path == f"/files/{self.name}":
                return self.serve_file(body)
            if path.rstrip("/") == "/simple":
                return self.serve_root(body)
            m = re.fullmatch(r"/simple/([^/]+)/?", path)
            if m and normalize(m.group(1)) == self.project:
                return self.serve_page(body)
        self.send_empty(404)

    def send_empty(self, status, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_page(self, body, content_type, text):
        data = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Vary", "Accept")
        self.end_headers()
        if body:
            self.wfile.write(data)

    def serve_root(self, body):
        p = self.project
        if wants_json(self.headers.get("Accept")):
            page = {"meta": {"api-version": "1.1"}, "projects": [{"name": p}]}
            return self.send_page(body, JSON_TYPE, json.dumps(page))
        text = (
            "<!DOCTYPE html>\n<html><body>\n"
            f'<a href="{html.escape(p)}/">{html.escape(p)}</a>\n'
            "</body></html>\n"
        )
        return self.send_page(body, "text/html; charset=utf-8", text)

    def serve_page(self, body):
        url = f"../../files/{self.name}"
        size = os.path.getsize(self.path_served)
        if wants_json(self.headers.get("Accept")):
            page = {
                "meta": {"api-version": "1.1"},
                "name": self.project,
                "versions": [self.name.split("-")[1]] if self.name.count("-") >= 2 else [],
                "files": [
                    {
                        "filename": self.name,
                        "url": url,
                        "hashes": {"sha256": self.sha256},
                        "size": size,
                    }
                ],
            }
            return self.send_page(body, JSON_TYPE, json.dumps(page))
        text = (
            "<!DOCTYPE html>\n<html><head>"
            '<meta name="pypi:repository-version" content="1.1">'
            f"<title>Links for {html.escape(self.project)}</title></head><body>\n"
            f'<a href="{html.escape(url)}#sha256={self.sha256}">{html.escape(self.name)}</a>\n'
            "</body></html>\n"
        )
        return self.send_page(body, "text/html; charset=utf-8", text)

    def serve_file(self, body):
        size = os.path.getsize(self.path_served)
        start, end = 0, size - 1
        status = 200
        rng = self.headers.get("Range")
        if rng:
            m = re.fullmatch(r"\s*bytes=(\d+)-(\d*)\s*", rng)
            if m:
                start = int(m.group(1))
                if m.group(2):
                    end = min(int(m.group(2)), size - 1)
                if start >= size:
                    self.send_empty(416, [("Content-Range", f"bytes */{size}")])
                    return
                status = 206
        length = end - start + 1
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if not body:
            return
        with open(self.path_served, "rb") as f:
            f.seek(start)
            left = length
            tokens = 0.0
            last = time.monotonic()
            while left > 0:
                now = time.monotonic()
                tokens = min(BURST, tokens + (now - last) * self.rate)
                last = now
                n = min(CHUNK, left)
                if tokens < n:
                    time.sleep((n - tokens) / self.rate)
                    continue
                data = f.read(n)
                if not data:
                    break
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return
                tokens -= len(data)
                left -= len(data)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--mbps", type=float, default=50.0, help="megabytes (10^6) per second")
    ap.add_argument("--port-file")
    ap.add_argument("--index", metavar="PROJECT", help="also serve a simple-API index of PROJECT")
    ap.add_argument("--log", metavar="PATH", help="append each request's method and path to PATH")
    a = ap.parse_args()
    Handler.path_served = a.file
    Handler.name = os.path.basename(a.file)
    Handler.rate = a.mbps * 1e6
    Handler.log_path = a.log
    if a.index:
        Handler.project = normalize(a.index)
        Handler.sha256 = file_sha256(a.file)
    srv = Server(("127.0.0.1", a.port), Handler)
    port = srv.server_address[1]
    print(port, flush=True)
    if a.port_file:
        with open(a.port_file, "w") as f:
            f.write(f"{port}\n")
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
