# dwarfcheck's LLDB probe for Tru64 lowerings (src/tru64/debuggers.rs runs
# it with the command line of src/consumer/debugger/lldb.rs). Same jobs and
# result lines as probe_gdb.py (beside it), except that a block's ranges are each range LLDB
# holds, and a variable LLDB cannot read is an error with LLDB's message
# (LLDB has no optimized-out state in its SB API).
import json
import os

import lldb


def _dwarfcheck_error(e):
    return {"error": str(e)}


def _dwarfcheck_variable(frame, name):
    try:
        v = frame.FindVariable(name)
        if not v.IsValid():
            return {"error": "no variable %s in frame 0" % name}
        err = v.GetError()
        if err.Fail():
            return {"error": err.GetCString() or "error"}
        data = v.GetData()
        e = lldb.SBError()
        got = []
        for i in range(8):
            b = data.GetUnsignedInt8(e, i)
            if e.Fail():
                return {"error": e.GetCString() or "cannot read byte %d" % i}
            got.append(b)
        # GetLocation names the register, or gives the address in hex
        # (GetLoadAddress gives a register's contents for its address).
        where = v.GetLocation() or ""
        return {"bytes": got, "address": int(where, 16) if where.startswith("0x") else None}
    except Exception as ex:  # noqa: BLE001 - everything LLDB raises is an answer
        return _dwarfcheck_error(ex)


def _dwarfcheck_block(target, frame):
    try:
        b = frame.GetBlock()
        if not b.IsValid() or not b.GetParent().IsValid():
            return {"lexical": False}
        ranges = []
        for i in range(b.GetNumRanges()):
            s = b.GetRangeStartAddress(i).GetLoadAddress(target)
            e = b.GetRangeEndAddress(i).GetLoadAddress(target)
            ranges.append([s, e])
        return {"lexical": True, "ranges": ranges}
    except Exception as ex:  # noqa: BLE001
        return _dwarfcheck_error(ex)


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
            # As src/consumer/debugger/probe_lldb.py: load the sections at their file addresses.
            target.SetModuleLoadAddress(target.GetModuleAtIndex(0), 0)
            frame = process.GetSelectedThread().GetFrameAtIndex(0)
            res["pc"] = frame.GetPC()
            res["vars"] = [_dwarfcheck_variable(frame, n) for n in job["variables"]]
            res["block"] = _dwarfcheck_block(target, frame)
        except Exception as ex:  # noqa: BLE001
            res = _dwarfcheck_error(ex)
        res["id"] = job["id"]
        out.write(json.dumps(res) + "\n")
        out.flush()
        if target is not None:
            dbg.DeleteTarget(target)


_dwarfcheck_probe(DWARFCHECK_DIR)  # noqa: F821 - set by the first -o
