# dwarfcheck's LLDB unwinding probe (src/consumer/debugger/unwind.rs runs it
# like probe_lldb.py). For each job of DWARFCHECK_DIR/jobs.json it creates a
# target, loads the core file and the executable at its file addresses, and
# lists at most job["frames"] frames of the thread from the newest, appending
# one JSON line to DWARFCHECK_DIR/results.jsonl in probe_gdb_unwind.py's
# form (registers by the names the job gives); "cfa" is SBFrame.GetCFA(),
# "stop" is "limit" or "end" (LLDB does not say why a stack ends).
import json
import os

import lldb


def _dwarfcheck_register(frame, name):
    v = frame.FindRegister(name)
    if not v.IsValid() or v.GetError().Fail():
        return "o"
    e = lldb.SBError()
    n = v.GetValueAsUnsigned(e, 0)
    return "o" if e.Fail() else n


def _dwarfcheck_unwind(d):
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
            target.SetModuleLoadAddress(target.GetModuleAtIndex(0), 0)
            thread = process.GetThreadAtIndex(0)
            n = thread.GetNumFrames()
            frames = []
            stop = "limit"
            for i in range(job["frames"]):
                if i >= n:
                    break
                f = thread.GetFrameAtIndex(i)
                rec = {"pc": f.GetPC(), "cfa": f.GetCFA()}
                if i + 1 >= n:
                    rec["caller"] = None
                    frames.append(rec)
                    stop = "end"
                    break
                older = thread.GetFrameAtIndex(i + 1)
                rec["caller"] = older.GetPC()
                rec["regs"] = {str(k): _dwarfcheck_register(older, name) for k, name in job["regs"]}
                frames.append(rec)
            res["frames"] = frames
            res["stop"] = stop
        except Exception as ex:  # noqa: BLE001 - everything LLDB raises is an answer
            res["error"] = str(ex)
        res["id"] = job["id"]
        out.write(json.dumps(res) + "\n")
        out.flush()
        if target is not None:
            dbg.DeleteTarget(target)
    out.close()


_dwarfcheck_unwind(DWARFCHECK_DIR)  # noqa: F821 - set by the first -o
