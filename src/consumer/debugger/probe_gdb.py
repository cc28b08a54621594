# dwarfcheck's GDB probe (src/consumer/debugger/gdb.rs runs it with
# `gdb -nx -batch -ex "python DWARFCHECK_DIR='...'" -x probe_gdb.py`). For
# each job of the JSON list in DWARFCHECK_DIR/jobs.json it loads the
# executable and core file, reads the variable `v` and appends one JSON line
# to DWARFCHECK_DIR/results.jsonl:
#   {"id": ..., "bytes": [int | "o", ...]}   each byte, "o" = optimized out
#   {"id": ..., "synthetic": true}            a <synthetic pointer>
#   {"id": ..., "error": "message"}           what GDB raised
import json
import os

import gdb

gdb.execute("set confirm off")
gdb.execute("set pagination off")
gdb.execute("set width 0")

jobs = json.load(open(os.path.join(DWARFCHECK_DIR, "jobs.json")))  # noqa: F821 - set by -ex
out = open(os.path.join(DWARFCHECK_DIR, "results.jsonl"), "a")  # noqa: F821


def probe(job):
    gdb.execute("file " + job["executable"], to_string=True)
    gdb.execute("core-file " + job["core"], to_string=True)
    v = gdb.parse_and_eval("v")
    if job["shape"] == "pointer":
        text = str(v)
        if "synthetic pointer" in text:
            return {"synthetic": True}
        v.fetch_lazy()
        if v.is_optimized_out:
            return {"bytes": ["o"] * job["size"]}
        n = int(v)
        return {"bytes": list(n.to_bytes(job["size"], "little"))}
    v.fetch_lazy()
    got = []
    for i in range(job["size"]):
        e = v[i]
        got.append("o" if e.is_optimized_out else int(e) & 0xFF)
    return {"bytes": got}


for job in jobs:
    try:
        res = probe(job)
    except gdb.error as e:
        res = {"error": str(e)}
    except Exception as e:  # noqa: BLE001 - everything GDB raises is an answer
        res = {"error": "%s: %s" % (type(e).__name__, e)}
    res["id"] = job["id"]
    out.write(json.dumps(res) + "\n")
    out.flush()
    dwarfcheck_next_inferior()  # noqa: F821 - from gdb_inferior.py
