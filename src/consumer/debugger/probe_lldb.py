# dwarfcheck's LLDB probe (src/consumer/debugger/lldb.rs runs it inside
# `lldb --batch` after setting DWARFCHECK_DIR). For each job of the JSON list
# in DWARFCHECK_DIR/jobs.json it creates a target from the executable, loads
# the core file, reads the variable `v` in frame 0 and appends one JSON line
# to DWARFCHECK_DIR/results.jsonl (same forms as probe_gdb.py):
#   {"id": ..., "bytes": [int, ...]}   LLDB has no per-byte optimized-out state
#   {"id": ..., "error": "message", "size": n}   (n: the variable's size)
import json
import os

import lldb


def _dwarfcheck_probe(d):
    jobs = json.load(open(os.path.join(d, "jobs.json")))
    out = open(os.path.join(d, "results.jsonl"), "a")
    dbg = lldb.debugger
    for job in jobs:
        res = {}
        target = None
        try:
            target = dbg.CreateTarget(job["executable"])
            if not target or not target.IsValid():
                raise RuntimeError("cannot create a target")
            process = target.LoadCore(job["core"])
            if not process or not process.IsValid():
                raise RuntimeError("cannot load the core file")
            # Without an auxiliary vector in the core, LLDB does not load the
            # executable's sections: load them at their file addresses.
            target.SetModuleLoadAddress(target.GetModuleAtIndex(0), 0)
            frame = process.GetSelectedThread().GetFrameAtIndex(0)
            v = frame.FindVariable("v")
            if not v.IsValid():
                raise RuntimeError("no variable v in frame 0")
            err = v.GetError()
            if err.Fail():
                raise RuntimeError(err.GetCString() or "error")
            data = v.GetData()
            e = lldb.SBError()
            got = []
            for i in range(job["size"]):
                b = data.GetUnsignedInt8(e, i)
                if e.Fail():
                    raise RuntimeError(e.GetCString() or "cannot read byte %d" % i)
                got.append(b)
            res["bytes"] = got
        except Exception as ex:  # noqa: BLE001 - everything LLDB raises is an answer
            res["error"] = str(ex)
        res["id"] = job["id"]
        res["size"] = job["size"]
        out.write(json.dumps(res) + "\n")
        out.flush()
        if target is not None:
            dbg.DeleteTarget(target)


_dwarfcheck_probe(DWARFCHECK_DIR)  # noqa: F821 - set by the first -o
