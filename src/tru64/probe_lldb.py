# dwarfcheck's LLDB probe for Tru64 lowerings (src/tru64/debuggers.rs runs
# it with the command line of src/consumer/debugger/lldb.rs, after the job loop
# of src/consumer/debugger/lldb_core.py). Same jobs and
# result lines as probe_gdb.py (beside it), except that a block's ranges are each range LLDB
# holds, and a variable LLDB cannot read is an error with LLDB's message
# (LLDB has no optimized-out state in its SB API).
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


def _dwarfcheck_probe(job, target, process):
    frame = process.GetSelectedThread().GetFrameAtIndex(0)
    return {
        "pc": frame.GetPC(),
        "vars": [_dwarfcheck_variable(frame, n) for n in job["variables"]],
        "block": _dwarfcheck_block(target, frame),
    }


_dwarfcheck_each_core(DWARFCHECK_DIR, _dwarfcheck_probe)  # noqa: F821 - set by the first -o
