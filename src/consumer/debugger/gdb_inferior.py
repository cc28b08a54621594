# Shared by dwarfcheck's GDB probes (prepended to probe_gdb.py and
# probe_gdb_unwind.py by gdb.rs and unwind.rs): after each job, a fresh
# inferior. A core file leaves its target description with the inferior,
# and gdb-multiarch then refuses the next job's file of another
# architecture ("Architecture of file not recognized") or reads its core
# with the previous job's registers.
import gdb as _dwarfcheck_gdb


def dwarfcheck_next_inferior():
    try:
        _dwarfcheck_gdb.execute("core-file", to_string=True)
    except _dwarfcheck_gdb.error:
        pass
    try:
        old = _dwarfcheck_gdb.selected_inferior().num
        _dwarfcheck_gdb.execute("add-inferior", to_string=True)
        new = max(i.num for i in _dwarfcheck_gdb.inferiors())
        _dwarfcheck_gdb.execute("inferior %d" % new, to_string=True)
        _dwarfcheck_gdb.execute("remove-inferiors %d" % old, to_string=True)
    except _dwarfcheck_gdb.error:
        pass


