# dwarfcheck's LLDB probe (src/consumer/debugger/lldb.rs runs it inside
# `lldb --batch` after setting DWARFCHECK_DIR). For each job of the JSON list
# in DWARFCHECK_DIR/jobs.json (loaded by lldb_core.py, put in front of it)
# it reads the variable `v` in frame 0 and appends one JSON line
# to DWARFCHECK_DIR/results.jsonl (same forms as probe_gdb.py):
#   {"id": ..., "bytes": [int, ...]}   LLDB has no per-byte optimized-out state
#   {"id": ..., "error": "message", "size": n}   (n: the variable's size)


def _dwarfcheck_variable_bytes(job, target, process):
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
    return {"bytes": got}


_dwarfcheck_each_core(DWARFCHECK_DIR, _dwarfcheck_variable_bytes, echo=("size",))  # noqa: F821 - set by the first -o
