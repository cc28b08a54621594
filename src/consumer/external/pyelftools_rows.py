"""Prints the row tables pyelftools decodes from an ELF file's frame section,
in dwarfcheck's row text (docs/consumers.md, "Row text").

Usage: python3 pyelftools_rows.py FILE

One line per CIE or FDE header, one line per row; every number in hex
except register numbers (decimal). pyelftools' own exceptions about an
entry become an ERR line for that entry; anything that stops the walk of
the section becomes a section-level ERR line.

`decoded_rows` is the one place that reads pyelftools' row tables; the
protocol consumer examples/pyelftools_rows_consumer.py imports it too.
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


def decoded_rows(fde):
    """The rows pyelftools decodes for `fde` (`FDE.get_decoded().table`),
    in printed order, as (pc, cfa, rules):
      cfa:   None (no CFA rule, or a register without an offset: what
             pyelftools keeps for DW_CFA_def_cfa_register before any
             DW_CFA_def_cfa), ("reg", regno, offset) or ("expr", bytes);
      rules: (regno, kind, arg) sorted by regno, kind one of RULES' values
             ("unknown" otherwise), arg an int for off/valoff/reg, the
             expression's bytes (in order) for expr/valexpr, else None.
    Raises whatever pyelftools raises about the entry."""
    rows = []
    for row in fde.get_decoded().table:
        cfa = row.get("cfa")
        if cfa is None or (cfa.expr is None and (cfa.reg is None or cfa.offset is None)):
            cfa = None
        elif cfa.expr is not None:
            cfa = ("expr", bytes(cfa.expr))
        else:
            cfa = ("reg", cfa.reg, cfa.offset)
        rules = []
        for regno in sorted(k for k in row if isinstance(k, int)):
            rule = row[regno]
            kind = RULES.get(rule.type, "unknown")
            arg = rule.arg
            if kind in ("expr", "valexpr"):
                arg = bytes(arg)
            elif kind not in ("off", "valoff", "reg"):
                arg = None
            rules.append((regno, kind, arg))
        rows.append((row["pc"], cfa, rules))
    return rows


def cfa_text(cfa):
    if cfa is None:
        return "cfa=none"
    if cfa[0] == "expr":
        return "cfa=expr:" + hexbytes(cfa[1])
    return "cfa=reg:%d:%d" % (cfa[1], cfa[2])


def rule_text(regno, kind, arg):
    if kind in ("off", "valoff", "reg"):
        return "%d=%s:%d" % (regno, kind, arg)
    if kind in ("expr", "valexpr"):
        return "%d=%s:%s" % (regno, kind, hexbytes(arg))
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
                rows = decoded_rows(e)
            except Exception as x:  # pyelftools' own fault on this entry
                print("ERR %#x %s: %s" % (off, type(x).__name__, one_line(x)))
                continue
            for pc, cfa, rules in rows:
                parts = ["ROW %#x" % pc, cfa_text(cfa)]
                parts += [rule_text(*r) for r in rules]
                print(" ".join(parts))


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Exception as x:  # the walk of the section stopped here
        print("ERR section %s: %s" % (type(x).__name__, one_line(x)))
