#!/usr/bin/python3
"""push_stub.py --port P --out DIR [--fail-first N]: a stand-in for a
continuous-profiling store, for `record --push` tests.  Listens on
127.0.0.1:P and takes POSTs the way the stores do:
  Pyroscope  /ingest?name=..&from=..&until=..&format=pprof, multipart/
             form-data with the pprof in the part named "profile";
  Parca      /profiles/writeraw, JSON {"series": [{"labels": {"labels":
             [{name, value}..]}, "samples": [{"rawProfile": base64}]}]}.
Each request is written to DIR as N.json (path, query, content type,
labels, whether it was understood) and, when understood, N.pb.gz (the
pprof sent).  The first N requests are answered 503 (--fail-first), the
rest 200; a request it cannot read is answered 400.
"""
import argparse
import base64
import json
import os
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--fail-first", type=int, default=0)
args = ap.parse_args()
seen = [0]


def multipart_profile(ctype, body):
    """The bytes of the part named "profile", or None."""
    if not ctype.startswith("multipart/form-data") or "boundary=" not in ctype:
        return None
    boundary = ctype.split("boundary=", 1)[1].strip().strip('"').encode()
    for part in body.split(b"--" + boundary):
        head, sep, data = part.partition(b"\r\n\r\n")
        if sep and b'name="profile"' in head:
            return data[:-2] if data.endswith(b"\r\n") else data
    return None


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        n = seen[0]
        seen[0] += 1
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        url = urllib.parse.urlsplit(self.path)
        ctype = self.headers.get("Content-Type", "")
        rec = {"path": url.path, "query": dict(urllib.parse.parse_qsl(url.query)),
               "content_type": ctype, "bytes": len(body), "ok": False}
        pprof = None
        try:
            if url.path == "/ingest":
                pprof = multipart_profile(ctype, body)
            elif url.path == "/profiles/writeraw":
                req = json.loads(body)
                s = req["series"][0]
                rec["labels"] = {l["name"]: l["value"] for l in s["labels"]["labels"]}
                pprof = base64.b64decode(s["samples"][0]["rawProfile"], validate=True)
        except (ValueError, KeyError, IndexError, TypeError) as e:
            rec["error"] = str(e)
        rec["ok"] = pprof is not None and pprof[:2] == b"\x1f\x8b"
        if rec["ok"]:
            with open(os.path.join(args.out, "%d.pb.gz" % n), "wb") as f:
                f.write(pprof)
        code = 503 if n < args.fail_first else 200 if rec["ok"] else 400
        rec["answered"] = code
        with open(os.path.join(args.out, "%d.json" % n), "w") as f:
            json.dump(rec, f)
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"busy\n" if code == 503 else b"ok\n" if code == 200 else b"bad\n")


os.makedirs(args.out, exist_ok=True)
srv = HTTPServer(("127.0.0.1", args.port), Handler)
print("listening", flush=True)
try:
    srv.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
