# dwarfcheck's shared LLDB job loop, put in front of every LLDB probe (as
# gdb_inferior.py is for GDB). For each job of the JSON list in
# DWARFCHECK_DIR/jobs.json it creates a target from job["executable"], loads
# the core file job["core"] and the executable's sections at their file
# addresses (without an auxiliary vector in the core, LLDB loads none), and
# calls the probe's answer(job, target, process). It appends one JSON line
# per job to DWARFCHECK_DIR/results.jsonl: the answer, or {"error": message}
# when LLDB raised, with job["id"] and the job keys named in `echo`.
import json
import os

import lldb


def _dwarfcheck_each_core(d, answer, echo=()):
    jobs = json.load(open(os.path.join(d, "jobs.json")))
    out = open(os.path.join(d, "results.jsonl"), "a")
    dbg = lldb.debugger
    for job in jobs:
        target = None
        try:
            target = dbg.CreateTarget(job["executable"])
            if not target or not target.IsValid():
                raise RuntimeError("cannot create a target")
            process = target.LoadCore(job["core"])
            if not process or not process.IsValid():
                raise RuntimeError("cannot load the core file")
            target.SetModuleLoadAddress(target.GetModuleAtIndex(0), 0)
            res = answer(job, target, process)
        except Exception as ex:  # noqa: BLE001 - everything LLDB raises is an answer
            res = {"error": str(ex)}
        res["id"] = job["id"]
        for k in echo:
            res[k] = job[k]
        out.write(json.dumps(res) + "\n")
        out.flush()
        if target is not None:
            dbg.DeleteTarget(target)
    out.close()
