# dwarfcheck's LLDB unwinding probe (src/consumer/debugger/unwind.rs runs it
# like probe_lldb.py). For each job of DWARFCHECK_DIR/jobs.json it creates a
# target, loads the core file and the executable at its file addresses, and
# lists at most job["frames"] frames of the thread from the newest, appending
# one JSON line to DWARFCHECK_DIR/results.jsonl in probe_gdb_unwind.py's
# form (registers by the names the job gives); "cfa" is SBFrame.GetCFA(),
# "stop" is "limit" or "end" (LLDB does not say why a stack ends).
def _dwarfcheck_register(frame, name):
    v = frame.FindRegister(name)
    if not v.IsValid() or v.GetError().Fail():
        return "o"
    e = lldb.SBError()
    n = v.GetValueAsUnsigned(e, 0)
    return "o" if e.Fail() else n


def _dwarfcheck_unwind(job, target, process):
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
    return {"frames": frames, "stop": stop}


_dwarfcheck_each_core(DWARFCHECK_DIR, _dwarfcheck_unwind)  # noqa: F821 - set by the first -o
