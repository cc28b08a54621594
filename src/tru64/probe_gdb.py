# dwarfcheck's GDB probe for Tru64 lowerings (src/tru64/debuggers.rs runs
# it after src/consumer/debugger/gdb_inferior.py, with the command line of
# src/consumer/debugger/gdb.rs). For each job of DWARFCHECK_DIR/jobs.json
# it loads the x86-64 stand-in executable and the core stopped at one pc,
# and appends one JSON line to DWARFCHECK_DIR/results.jsonl:
#   {"id": ..., "pc": int, "vars": [VAR, ...], "block": BLOCK}
#   VAR:   {"bytes": [8 ints], "address": int | null}  the value, little-endian
#          {"optimized": true}                         <optimized out>
#          {"error": "message"}                        what GDB raised
#   BLOCK: {"lexical": false}                          the subprogram's block
#          {"lexical": true, "ranges": [[start, end]]} GDB 13's Python shows a
#          block's extent only (lowest start, highest end)
#          {"error": "message"}
#   {"id": ..., "error": "message"}                    loading failed
import json
import os

import gdb

gdb.execute("set confirm off")
gdb.execute("set pagination off")
gdb.execute("set width 0")

jobs = json.load(open(os.path.join(DWARFCHECK_DIR, "jobs.json")))  # noqa: F821 - set by -ex
out = open(os.path.join(DWARFCHECK_DIR, "results.jsonl"), "a")  # noqa: F821


def error(e):
    return {"error": ("%s: %s" % (type(e).__name__, e)) if not isinstance(e, gdb.error) else str(e)}


def variable(frame, name):
    try:
        v = frame.read_var(name)
        v.fetch_lazy()
        if v.is_optimized_out:
            return {"optimized": True}
        n = int(v) & 0xFFFFFFFFFFFFFFFF
        a = v.address
        return {"bytes": list(n.to_bytes(8, "little")), "address": None if a is None else int(a)}
    except Exception as e:  # noqa: BLE001 - everything GDB raises is an answer
        return error(e)


def block(frame):
    try:
        b = frame.block()
        if b.function is not None:
            return {"lexical": False}
        return {"lexical": True, "ranges": [[int(b.start), int(b.end)]]}
    except Exception as e:  # noqa: BLE001
        return error(e)


def probe(job):
    gdb.execute("file " + job["executable"], to_string=True)
    gdb.execute("core-file " + job["core"], to_string=True)
    frame = gdb.selected_frame()
    return {
        "pc": int(frame.pc()),
        "vars": [variable(frame, n) for n in job["variables"]],
        "block": block(frame),
    }


for job in jobs:
    try:
        res = probe(job)
    except Exception as e:  # noqa: BLE001
        res = error(e)
    res["id"] = job["id"]
    out.write(json.dumps(res) + "\n")
    out.flush()
    dwarfcheck_next_inferior()  # noqa: F821 - from gdb_inferior.py
