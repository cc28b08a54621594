# dwarfcheck's LLDB row-table probe (src/consumer/debugger/rows.rs runs it
# like probe_lldb.py). For each job of DWARFCHECK_DIR/jobs.json it creates a
# target, loads the core file and the executable at its file addresses, and
# runs `image show-unwind -a job["address"]`, appending one JSON line
# {"id", "text"} to DWARFCHECK_DIR/results.jsonl with what the command
# printed (its output, then its error), at most 256 KiB of it.
_DWARFCHECK_MAX_TEXT = 256 * 1024


def _dwarfcheck_rows(job, target, process):
    r = lldb.SBCommandReturnObject()
    lldb.debugger.GetCommandInterpreter().HandleCommand("image show-unwind -a 0x%x" % job["address"], r)
    text = (r.GetOutput() or "") + (r.GetError() or "")
    return {"text": text[:_DWARFCHECK_MAX_TEXT]}


_dwarfcheck_each_core(DWARFCHECK_DIR, _dwarfcheck_rows)  # noqa: F821 - set by the first -o
