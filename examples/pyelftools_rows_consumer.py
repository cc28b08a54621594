#!/usr/bin/env python3
"""pyelftools as a row-table consumer speaking dwarfcheck's process protocol.

Protocol `dwarfcheck/2` (docs/protocol.md): dwarfcheck sends a `hello`
naming the versions it speaks; this program picks version 2, declares
`rows` only, and answers each `rows` request with the row table pyelftools
0.33 decodes (`FDE.get_decoded().table`) for the FDE asked, or for the FDE
covering the address asked. `evaluate` and `unwind` requests are declined
(`unsupported`), as the protocol allows.

The frame section comes in the request (hex); pyelftools reads it directly
(`CallFrameInfo` over the bytes, at the section's address), no ELF file is
written. How pyelftools' rows are read is shared with the row-text helper
of the built-in `pyelftools` consumer (src/consumer/external/pyelftools_rows.py,
`decoded_rows`): one reading, two transports. The answers are those of the
built-in consumer, but for one thing the protocol lets this program say
itself (docs/consumers.md, "pyelftools"): an AArch64 FDE using
DW_CFA_AARCH64_negate_ra_state (0x2d) is `unsupported`, since pyelftools
reads 0x2d as DW_CFA_GNU_window_save and keeps no rule for RA_SIGN_STATE
(the built-in consumer removes that rule from the reference's table
instead).

Run it:  dwarfcheck run --consumers none --consumer 'cmd:python3 examples/pyelftools_rows_consumer.py' specs/cases/cfi
Needs pyelftools (`pip install pyelftools`).
"""

import importlib.util
import io
import json
import os
import sys

from elftools.dwarf.callframe import FDE, CallFrameInfo
from elftools.dwarf.structs import DWARFStructs

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "pyelftools_rows", os.path.join(HERE, "..", "src", "consumer", "external", "pyelftools_rows.py"))
rows_helper = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rows_helper)

PROTOCOL = "dwarfcheck/2"
NAME = "pyelftools-protocol"
I64 = 1 << 63

# The row helper's rule kinds -> the protocol's register rule kinds.
KINDS = {"undefined": "undefined", "same": "same-value", "off": "offset", "valoff": "val-offset",
         "reg": "register", "expr": "expression", "valexpr": "val-expression", "arch": "architectural"}


class Answer(Exception):
    """Ends a request with the outcome it carries (a failure)."""

    def __init__(self, outcome):
        super().__init__(outcome.get("what") or outcome.get("rule"))
        self.outcome = outcome


def unsupported(what):
    return Answer({"kind": "unsupported", "what": what})


def diagnosed(what):
    """pyelftools rejected the entry: an ill-formed answer (the kind is
    what is judged; the rule names pyelftools' own reason)."""
    return Answer({"kind": "ill-formed", "rule": "pyelftools:" + what, "at": None})


def last_first(b):
    """Expression bytes in the outcome vocabulary: hex, last byte first."""
    return bytes(reversed(b)).hex()


def offset(n):
    if not -I64 <= n < I64:
        raise unsupported("an offset beyond 64 bits (no normal form)")
    return n


def address(a):
    """pyelftools computes addresses in unbounded integers."""
    if not 0 <= a < 2 * I64:
        raise unsupported("an address beyond 64 bits (no normal form)")
    return a


def cfa_rule(cfa):
    if cfa[0] == "expr":
        return {"kind": "expression", "expr": last_first(cfa[1])}
    return {"kind": "reg-offset", "register": cfa[1], "offset": offset(cfa[2]), "aspace": 0}


def register_rule(kind, arg):
    k = KINDS.get(kind)
    if k is None:
        raise unsupported("a register rule pyelftools does not name")
    rule = {"kind": k}
    if kind in ("off", "valoff"):
        rule["offset"] = offset(arg)
    elif kind == "reg":
        rule["register"] = arg
    elif kind in ("expr", "valexpr"):
        rule["expr"] = last_first(arg)
    return rule


def entries(req):
    """pyelftools' entries of the request's frame section."""
    sec, target = req["section"], req["target"]
    data = bytes.fromhex(sec["bytes"])
    structs = DWARFStructs(little_endian=target["endian"] == "little", dwarf_format=32,
                           address_size=target["address_size"])
    cfi = CallFrameInfo(io.BytesIO(data), len(data), sec["address"], structs,
                        for_eh_frame=sec["kind"] == "eh-frame")
    try:
        return cfi.get_entries()
    except Exception as x:  # the walk of the section stopped
        raise diagnosed("diagnostic") from x


def fde_range(fde):
    start = fde.header["initial_location"]
    return start, start + fde.header["address_range"]


def find_fde(req):
    """The FDE asked for: at `fde_offset`, or the first covering `address`."""
    fdes = [e for e in entries(req) if isinstance(e, FDE)]
    if "fde_offset" in req:
        for e in fdes:
            if e.offset == req["fde_offset"]:
                return e
        raise diagnosed("not-shown")
    for e in fdes:
        start, end = fde_range(e)
        if start <= req["address"] < end:
            return e
    raise Answer({"kind": "eval-error", "rule": "unwind.no-fde", "at": None})


def rows(req):
    """The `rows` outcome: the FDE's row table (or the row covering the
    address), each row ending where the next starts and the last at the
    FDE's end."""
    fde = find_fde(req)
    if req["target"]["arch"] == "aarch64":
        ops = [i.opcode for i in list(fde.cie.instructions) + list(fde.instructions)]
        if 0x2D in ops:
            raise unsupported("DW_CFA_AARCH64_negate_ra_state: pyelftools reads 0x2d as "
                              "DW_CFA_GNU_window_save and keeps no RA_SIGN_STATE rule")
    try:
        decoded = rows_helper.decoded_rows(fde)
    except Exception as x:  # pyelftools' own fault on this entry
        raise diagnosed("diagnostic") from x
    _, fde_end = fde_range(fde)
    out = []
    for i, (pc, cfa, rules) in enumerate(decoded):
        end = decoded[i + 1][0] if i + 1 < len(decoded) else fde_end
        if cfa is None:
            if end <= pc:
                continue
            raise diagnosed("cfa-unspecified")
        registers = {str(r): register_rule(kind, arg) for r, kind, arg in rules}
        out.append({"start": address(pc), "end": address(end), "cfa": cfa_rule(cfa), "registers": registers})
    if "address" in req:
        out = [r for r in out if r["start"] <= req["address"] < r["end"]]
    return {"kind": "table", "fde_offset": fde.offset, "rows": out}


def handle(msg):
    """The reply to one message."""
    if msg.get("type") == "hello":
        if PROTOCOL not in msg.get("versions", []):
            # A dwarfcheck that speaks version 1 only: nothing to answer.
            return {"protocol": "dwarfcheck/1", "type": "hello", "name": NAME,
                    "supports": {"editions": [], "expr": False}}
        return {"protocol": PROTOCOL, "type": "hello", "name": NAME,
                "supports": {"editions": ["dwarf5", "dwarf5-gnu"], "expr": False, "rows": True, "unwind": False}}
    try:
        if msg.get("type") != "rows":
            raise unsupported("%s requests: this consumer answers rows only" % msg.get("type"))
        outcome = rows(msg)
    except Answer as a:
        outcome = a.outcome
    return {"protocol": msg.get("protocol", PROTOCOL), "type": "result", "id": msg["id"], "outcome": outcome}


def main():
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(handle(json.loads(line)), separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
