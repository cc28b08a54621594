# dwarfcheck's GDB unwinding probe (src/consumer/debugger/unwind.rs runs it
# like probe_gdb.py). For each job of DWARFCHECK_DIR/jobs.json it loads the
# executable and core file and walks at most job["frames"] frames from the
# newest, appending one JSON line to DWARFCHECK_DIR/results.jsonl:
#   {"id": ..., "frames": [{"pc": int, "cfa": int | null, "caller": int | null,
#                           "regs": {"0": int | "o", ...}}, ...],
#    "stop": "limit" | GDB's unwind stop reason for the last frame}
# "cfa" is the "frame at" address of `info frame` (GDB's frame id: the CFA);
# "regs" are the caller's general registers, read by the names the job
# gives as [[DWARF number, name], ...] (the machine's: rax .. rip on x86-64,
# x0 .. x30 and sp on AArch64), "o" when GDB has no value (<not saved>,
# unavailable, unreadable).
import json
import os
import re

import gdb

gdb.execute("set confirm off")
gdb.execute("set pagination off")
gdb.execute("set width 0")

jobs = json.load(open(os.path.join(DWARFCHECK_DIR, "jobs.json")))  # noqa: F821 - set by -ex
out = open(os.path.join(DWARFCHECK_DIR, "results.jsonl"), "a")  # noqa: F821

FRAME_AT = re.compile(r"frame at (0x[0-9a-fA-F]+)")


def cfa_of(frame):
    frame.select()
    try:
        text = gdb.execute("info frame", to_string=True)
    except gdb.error:
        # GDB 13 on AArch64 with pointer authentication: `info frame` of a
        # frame whose x30 is undefined (the base of the stack) fails with
        # "Register 30 was not saved" after printing the frame; the frame
        # itself unwinds. No CFA then (none is compared at the base).
        return None
    m = FRAME_AT.search(text)
    return int(m.group(1), 16) if m else None


def register(frame, name):
    try:
        v = frame.read_register(name)
        if v.is_optimized_out:
            return "o"
        return int(v) & 0xFFFFFFFFFFFFFFFF
    except gdb.error:
        return "o"


def probe(job):
    gdb.execute("file " + job["executable"], to_string=True)
    gdb.execute("core-file " + job["core"], to_string=True)
    frames = []
    stop = "limit"
    f = gdb.newest_frame()
    for _ in range(job["frames"]):
        # An error about this frame ends the list before it (GDB could not
        # show the frame whole).
        try:
            rec = {"pc": f.pc(), "cfa": cfa_of(f)}
        except gdb.error as e:
            stop = str(e)
            break
        try:
            older = f.older()
        except gdb.error as e:
            older = None
            stop = str(e)
        if older is None:
            rec["caller"] = None
            frames.append(rec)
            if stop == "limit":
                stop = gdb.frame_stop_reason_string(f.unwind_stop_reason())
            break
        try:
            rec["caller"] = older.pc()
        except gdb.error as e:
            stop = str(e)
            break
        rec["regs"] = {str(n): register(older, name) for n, name in job["regs"]}
        frames.append(rec)
        f = older
    return {"frames": frames, "stop": stop}


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
