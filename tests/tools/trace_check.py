#!/usr/bin/python3
"""trace_check.py TRACE.json: checks a Chrome trace-event file as written
by `scalebpf report --format perfetto` and prints one JSON object:
  problems   the schema's rules broken: an event without ph/pid/tid/ts, a
             B without its E (or an E without a B), slices of one track out
             of time order or straddling an open slice's end, an async (b/e)
             slice unended, ended twice or before its begin, a flow start
             without its finish, a negative ts or dur
  busy, wait {tid: ns}: the work slices' busy_ns and the wait slices'
             wait_ns summed per thread
  tracks, slices, async_slices, flows, counters: how many
"""
import json
import sys

with open(sys.argv[1]) as f:
    doc = json.load(f)
ev = doc["traceEvents"] if isinstance(doc, dict) else doc
problems = []
busy, wait = {}, {}
tracks = {}
open_b = {}
async_open = {}
asyncs = 0
flows_s, flows_f = set(), set()
counters = slices = 0
for e in ev:
    ph = e.get("ph")
    if ph is None or "pid" not in e:
        problems.append("an event without ph or pid: %r" % e)
        continue
    if ph in ("X", "B", "E", "s", "f") and ("tid" not in e or "ts" not in e):
        problems.append("a %s event without tid or ts" % ph)
        continue
    if "ts" in e and e["ts"] < 0:
        problems.append("negative ts")
    key = (e["pid"], e.get("tid"))
    if ph == "X":
        slices += 1
        if e.get("dur", 0) < 0:
            problems.append("negative dur")
        tracks.setdefault(key, []).append((e["ts"], e["ts"] + e["dur"]))
        a = e.get("args", {})
        tid = str(e["tid"])
        if e["name"] == "work":
            busy[tid] = busy.get(tid, 0) + a.get("busy_ns", 0)
        elif e["name"].startswith("wait: "):
            wait[tid] = wait.get(tid, 0) + a.get("wait_ns", 0)
    elif ph == "B":
        open_b[key] = open_b.get(key, 0) + 1
    elif ph == "E":
        if not open_b.get(key):
            problems.append("an E without its B on %r" % (key,))
        else:
            open_b[key] -= 1
    elif ph in ("b", "e"):
        k = (e["pid"], e.get("cat"), e.get("id"), e.get("name"))
        if ph == "b":
            asyncs += 1
            if k in async_open:
                problems.append("async slice %r begun twice" % (k,))
            async_open[k] = e["ts"]
        elif k not in async_open:
            problems.append("async end without its begin: %r" % (k,))
        elif e["ts"] < async_open.pop(k):
            problems.append("async slice %r ends before it begins" % (k,))
    elif ph == "s":
        flows_s.add(e["id"])
    elif ph == "f":
        flows_f.add(e["id"])
    elif ph == "C":
        counters += 1
for k in async_open:
    problems.append("async slice %r never ends" % (k,))
for key, n in open_b.items():
    if n:
        problems.append("%d B without an E on %r" % (n, key))
for id_ in flows_s - flows_f:
    problems.append("flow %r starts and never finishes" % id_)
eps = 0.0005  # the writer's µs with three decimals: a ns of rounding
for key, sl in tracks.items():
    stack = []
    last = -1.0
    for ts, end in sl:
        if ts < last - eps:
            problems.append("track %r: a slice at %.3f after one at %.3f" % (key, ts, last))
        last = ts
        while stack and stack[-1] <= ts + eps:
            stack.pop()
        if stack and end > stack[-1] + eps:
            problems.append("track %r: a slice at %.3f straddles the end %.3f of the one open"
                            % (key, ts, stack[-1]))
        stack.append(end)
json.dump({"problems": problems[:20], "busy": busy, "wait": wait, "tracks": len(tracks),
           "slices": slices, "async_slices": asyncs, "flows": len(flows_s), "counters": counters,
           "metadata": doc.get("metadata", {}) if isinstance(doc, dict) else {}}, sys.stdout)
print()
