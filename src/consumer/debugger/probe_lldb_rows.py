# dwarfcheck's LLDB row-table probe (src/consumer/debugger/rows.rs runs it
# like probe_lldb.py). For each job of DWARFCHECK_DIR/jobs.json it creates a
# target, loads the core file and the executable at its file addresses, and
# runs `image show-unwind -a job["address"]`, appending one JSON line
# {"id", "text"} to DWARFCHECK_DIR/results.jsonl with what the command
# printed (its output, then its error), at most 256 KiB of it.
import json
import os

import lldb

_DWARFCHECK_MAX_TEXT = 256 * 1024


def _dwarfcheck_rows(d):
    jobs = json.load(open(os.path.join(d, "jobs.json")))
    out = open(os.path.join(d, "results.jsonl"), "a")
    dbg = lldb.debugger
    ci = dbg.GetCommandInterpreter()
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
            target.SetModuleLoadAddress(target.GetModuleAtIndex(0), 0)
            r = lldb.SBCommandReturnObject()
            ci.HandleCommand("image show-unwind -a 0x%x" % job["address"], r)
            text = (r.GetOutput() or "") + (r.GetError() or "")
            res["text"] = text[:_DWARFCHECK_MAX_TEXT]
        except Exception as ex:  # noqa: BLE001 - everything LLDB raises is an answer
            res["error"] = str(ex)
        res["id"] = job["id"]
        out.write(json.dumps(res) + "\n")
        out.flush()
        if target is not None:
            dbg.DeleteTarget(target)
    out.close()


_dwarfcheck_rows(DWARFCHECK_DIR)  # noqa: F821 - set by the first -o
