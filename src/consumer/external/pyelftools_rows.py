"""Prints the row tables pyelftools decodes from an ELF file's frame section,
in dwarfcheck's row text (docs/consumers.md, "Row text").

Usage: python3 pyelftools_rows.py FILE

One line per CIE or FDE header, one line per row; every number in hex
except register numbers (decimal). pyelftools' own exceptions about an
entry become an ERR line for that entry; anything that stops the walk of
the section becomes a section-level ERR line.
"""

import sys

from elftools.elf.elffile import ELFFile
from elftools.dwarf.callframe import CIE, FDE, ZERO, RegisterRule


RULES = {
    RegisterRule.UNDEFINED: "undefined",
    RegisterRule.SAME_VALUE: "same",
    RegisterRule.OFFSET: "off",
    RegisterRule.VAL_OFFSET: "valoff",
    RegisterRule.REGISTER: "reg",
    RegisterRule.EXPRESSION: "expr",
    RegisterRule.VAL_EXPRESSION: "valexpr",
    RegisterRule.ARCHITECTURAL: "arch",
}


def hexbytes(b):
    return "".join("%02x" % x for x in b)


def cfa_text(cfa):
    if cfa is None:
        return "cfa=none"
    if cfa.expr is not None:
        return "cfa=expr:" + hexbytes(cfa.expr)
    if cfa.reg is None:
        return "cfa=none"
    return "cfa=reg:%d:%d" % (cfa.reg, cfa.offset)


def rule_text(regno, rule):
    kind = RULES.get(rule.type, "unknown")
    if kind in ("off", "valoff", "reg"):
        return "%d=%s:%d" % (regno, kind, rule.arg)
    if kind in ("expr", "valexpr"):
        return "%d=%s:%s" % (regno, kind, hexbytes(rule.arg))
    return "%d=%s" % (regno, kind)


def one_line(text):
    return " ".join(str(text).split())


def main(path):
    with open(path, "rb") as f:
        elf = ELFFile(f)
        dwarf = elf.get_dwarf_info()
        if dwarf.has_EH_CFI():
            entries = dwarf.EH_CFI_entries()
        elif dwarf.has_CFI():
            entries = dwarf.CFI_entries()
        else:
            print("ERR section no frame section")
            return
        for e in entries:
            if isinstance(e, ZERO):
                continue
            off = e.offset
            if isinstance(e, CIE):
                print("CIE %#x" % off)
                continue
            if not isinstance(e, FDE):
                continue
            start = e.header["initial_location"]
            end = start + e.header["address_range"]
            print("FDE %#x cie=%#x pc=%#x..%#x" % (off, e.cie.offset, start, end))
            try:
                table = e.get_decoded().table
            except Exception as x:  # pyelftools' own fault on this entry
                print("ERR %#x %s: %s" % (off, type(x).__name__, one_line(x)))
                continue
            for row in table:
                regs = sorted(k for k in row if isinstance(k, int))
                parts = ["ROW %#x" % row["pc"], cfa_text(row.get("cfa"))]
                parts += [rule_text(r, row[r]) for r in regs]
                print(" ".join(parts))


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Exception as x:  # the walk of the section stopped here
        print("ERR section %s: %s" % (type(x).__name__, one_line(x)))
