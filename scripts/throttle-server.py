#!/usr/bin/env python3
"""Serve one file over HTTP on 127.0.0.1 at a fixed bandwidth, for the
download benchmark (scripts/bench-download.sh).

    throttle-server.py FILE [--port N] [--mbps 50] [--port-file PATH]

GET /<file name> answers the file (200, or 206 for `Range: bytes=N-` and
`bytes=N-M`; 416 past its end); any other path is 404. Each response is
paced on its own: a token bucket of MBPS megabytes (10^6 bytes) a second
holding at most 256 KiB, so a client that stalls gets no catch-up burst
beyond that, as from a real link. Port 0 (the default) picks a free port,
printed on the first line of stdout (and written to --port-file).
Loopback only; it never connects anywhere.
"""

import argparse
import http.server
import os
import re
import socketserver
import sys
import time

CHUNK = 64 * 1024
BURST = 256 * 1024


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    path_served = ""
    name = ""
    rate = 50e6

    def log_message(self, *args):  # quiet
        pass

    def do_HEAD(self):
        self.serve(body=False)

    def do_GET(self):
        self.serve(body=True)

    def serve(self, body):
        if self.path.split("?")[0].lstrip("/") != self.name:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
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
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--mbps", type=float, default=50.0, help="megabytes (10^6) per second")
    ap.add_argument("--port-file")
    a = ap.parse_args()
    Handler.path_served = a.file
    Handler.name = os.path.basename(a.file)
    Handler.rate = a.mbps * 1e6
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
