#!/usr/bin/env python3
"""Judges pyelftools' DWARF expression parser on decoding, from a
`dwarfcheck export-suite` export alone (docs/suite-format.md).

For every expression case (`kind` `expr`) of the export, the case's bytes
are parsed with `elftools.dwarf.dwarf_expr.DWARFExprParser` (structs for
the case's byte order, DWARF format, address size and version), and its
operations (offset, name, operands; nested `DW_OP_entry_value` blocks
operation by operation) are compared with the export's `operations`.

Verdicts per case:
  agree                  same operations (or both reject the bytes);
  disagree               a different operation, operand or offset, or
                         bytes read that the export cannot decode;
  decode-error           pyelftools raised where the export decodes;
  unsupported-operation  an operation pyelftools' table does not name
                         (vendor operations of other profiles).

Each difference carries a class ID (CLASSES below, PE1 to PE5; PE0 for
one no class explains), written up in docs/consumers.md.

Exit status: 0, or 1 with --gate when any case disagrees; 2 on the
checker's own errors (unreadable export, wrong format or version).

Usage: suite_check.py [--gate] [--show N] [--json] EXPORT_DIR
"""

import argparse
import json
import os
import sys

FORMAT = "dwarfcheck-suite"
VERSION = 1
# pyelftools' opcode -> name table, set by main() once pyelftools is imported.
DW_OP_opcode2name = {}


def fail(msg):
    print("suite_check: " + msg, file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path, "rb") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("cannot read %s: %s" % (path, e))


def export_operands(op):
    """The export's operands of one operation, in pyelftools' shapes:
    integers, and blocks as lists of byte values."""
    out = []
    for v in op["operands"]:
        out.append(list(bytes.fromhex(v)) if isinstance(v, str) else v)
    return out


# Classes of pyelftools' differences (docs/consumers.md, "pyelftools'
# expression parser (examples/suite_check.py)"), found on pyelftools 0.33.
CLASSES = {
    "PE0": "unclassified: a difference no class below explains (look at it)",
    "PE1": "a DWARF 5 operation pyelftools names but cannot parse (no entry in its dispatch table: "
           "DW_OP_constx, DW_OP_xderef_type, DW_OP_reinterpret): KeyError",
    "PE2": "a block operand longer than the rest of the expression is read short, without an error",
    "PE3": "a LEB128 operand wider than 64 bits is read as a Python integer, without an error",
    "PE4": "opcodes 0xe0-0xff are always read as GNU operations, whatever the vendor profile",
    "PE5": "no structs for an address size other than 2, 4 or 8 bytes: nothing can be parsed",
}


def classify_accepted(reason):
    """The class of an expression the export cannot decode (the reason of
    its `decode_error`) and pyelftools reads without an error."""
    if reason.startswith("truncated"):
        return "PE2"
    if reason.startswith("LEB128"):
        return "PE3"
    if reason.startswith("unknown opcode"):
        return "PE4"
    return "PE0"


def compare(theirs, ours, known_names, path=""):
    """None when pyelftools' operations `theirs` match the export's `ours`,
    else (verdict, class, detail)."""
    for i in range(max(len(theirs), len(ours))):
        if i >= len(theirs):
            return ("disagree", "PE0",
                    "%sstops after %d operation(s); the export has %s at offset %d"
                    % (path, len(theirs), ours[i]["name"], ours[i]["offset"]))
        t = theirs[i]
        if i >= len(ours):
            return ("disagree", "PE0",
                    "%sreads an extra %s at offset %d" % (path, t.op_name, t.offset))
        o = ours[i]
        if o["name"] not in known_names:
            return ("unsupported-operation", None, "%s%s at offset %d (pyelftools reads %s)"
                    % (path, o["name"], o["offset"], t.op_name))
        if t.offset != o["offset"] or t.op_name != o["name"]:
            return ("disagree", "PE0", "%soffset %d: pyelftools %s at %d, export %s at %d"
                    % (path, o["offset"], t.op_name, t.offset, o["name"], o["offset"]))
        want = export_operands(o)
        if "nested" in o:
            nested = t.args[0] if t.args and isinstance(t.args[0], list) else []
            r = compare(nested, o["nested"], known_names, "%s%s@%d: " % (path, o["name"], o["offset"]))
            if r is not None:
                return r
            continue
        got = [list(a) if isinstance(a, (bytes, bytearray)) else a for a in t.args]
        if got != want:
            return ("disagree", "PE0", "%s%s at offset %d: pyelftools operands %r, export %r"
                    % (path, o["name"], o["offset"], got, want))
    return None


def first_unknown(ours, data, known_names, path=""):
    """The first operation of the export pyelftools has no entry for (its
    name is not in pyelftools' table, or pyelftools names its opcode
    otherwise: a vendor operation of another profile), described; None if
    there is none. Nested operations are searched too."""
    for o in ours:
        opcode = data[o["offset"]] if o["offset"] < len(data) else None
        theirs = DW_OP_opcode2name.get(opcode) if opcode is not None else None
        if o["name"] not in known_names or (theirs is not None and theirs != o["name"] and "nested" not in o):
            return "%s%s (opcode 0x%02x) at offset %d" % (path, o["name"], opcode or 0, o["offset"])
        if "nested" in o:
            block = bytes.fromhex(o["operands"][0])
            found = first_unknown(o["nested"], block, known_names, "%s%s@%d: " % (path, o["name"], o["offset"]))
            if found:
                return found
    return None


def judge(case, targets, parser_for, known_names):
    ctx = case["context"]
    target = targets.get(ctx["target"], {})
    little = target.get("endian", "little") == "little"
    cu = ctx.get("cu") or {}
    dwarf64 = cu.get("format") == "dwarf64"
    parser = parser_for(little, 64 if dwarf64 else 32, ctx["address_size"], ctx["dwarf_version"])
    if parser is None:
        return ("decode-error", "PE5", "pyelftools has no structs for address size %d" % ctx["address_size"])
    data = bytes.fromhex(case["bytes"])
    ours = case["operations"]
    rejected = case.get("decode_error") is not None
    try:
        theirs = parser.parse_expr(data)
    except Exception as e:  # pyelftools raises several types on bad input
        unknown = first_unknown(ours, data, known_names)
        if unknown is not None:
            return ("unsupported-operation", None, unknown)
        if rejected:
            return ("agree", None, "")
        cls = "PE1" if isinstance(e, KeyError) and DW_OP_opcode2name.get(e.args[0] if e.args else None) else "PE0"
        return ("decode-error", cls, "%s: %s" % (type(e).__name__, e))
    if rejected:
        # The export's operations end where decoding failed: pyelftools must
        # agree on those, then accept what the export rejects.
        stop = case["decode_error"]["offset"]
        r = compare([t for t in theirs if t.offset < stop], ours, known_names)
        if r is not None:
            return r
        return ("disagree", classify_accepted(case["decode_error"]["reason"]),
                "the export stops at offset %d (%s); pyelftools reads %s"
                % (stop, case["decode_error"]["reason"],
                   ", ".join("%s@%d" % (t.op_name, t.offset) for t in theirs if t.offset >= stop) or "nothing"))
    r = compare(theirs, ours, known_names)
    return r if r is not None else ("agree", None, "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("export", help="directory written by `dwarfcheck export-suite --out DIR`")
    ap.add_argument("--gate", action="store_true", help="exit 1 when pyelftools disagrees on any case")
    ap.add_argument("--show", type=int, default=20, help="findings to print in full (default 20)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args()

    try:
        import elftools
        from elftools.dwarf.dwarf_expr import DWARFExprParser, DW_OP_name2opcode
        from elftools.dwarf.dwarf_expr import DW_OP_opcode2name as opcode2name
        from elftools.dwarf.structs import DWARFStructs
    except ImportError as e:
        fail("pyelftools is not installed: %s" % e)

    index = load(os.path.join(args.export, "index.json"))
    if index.get("format") != FORMAT or index.get("version") != VERSION:
        fail("%s is not a %s version %d export" % (args.export, FORMAT, VERSION))

    parsers = {}

    def parser_for(little, fmt, asize, version):
        key = (little, fmt, asize, version)
        if key not in parsers:
            try:
                parsers[key] = DWARFExprParser(DWARFStructs(little_endian=little, dwarf_format=fmt,
                                                            address_size=asize, dwarf_version=version))
            except Exception:
                parsers[key] = None
        return parsers[key]

    global DW_OP_opcode2name
    DW_OP_opcode2name = opcode2name
    known = set(DW_OP_name2opcode)
    files = {}
    counts = {"agree": 0, "disagree": 0, "decode-error": 0, "unsupported-operation": 0}
    classes = {}
    findings = []
    for entry in index["cases"]:
        if entry["kind"] != "expr":
            continue
        path = entry["path"]
        if path not in files:
            f = load(os.path.join(args.export, path))
            if f.get("version") != VERSION:
                fail("%s: version %r, not %d" % (path, f.get("version"), VERSION))
            files[path] = (f["targets"], {c["id"]: c for c in f["cases"]})
        targets, cases = files[path]
        case = cases.get(entry["id"])
        if case is None:
            fail("%s: no case %s, which the index lists" % (path, entry["id"]))
        verdict, cls, detail = judge(case, targets, parser_for, known)
        counts[verdict] += 1
        if verdict != "agree":
            if cls is not None:
                classes[cls] = classes.get(cls, 0) + 1
            findings.append({"id": case["id"], "verdict": verdict, "class": cls, "detail": detail})

    judged = sum(counts.values())
    if args.json:
        print(json.dumps({"pyelftools": elftools.__version__, "cases": judged, "verdicts": counts,
                          "classes": classes, "findings": findings}, indent=2, sort_keys=True))
    else:
        print("pyelftools %s on the decoding of %d expression case(s) of %s:"
              % (elftools.__version__, judged, args.export))
        for v in ("agree", "disagree", "decode-error", "unsupported-operation"):
            print("  %-22s %d" % (v, counts[v]))
        for k in sorted(classes):
            print("  %-4s %4d  %s" % (k, classes[k], CLASSES.get(k, "")))
        for f in findings[: args.show if args.show > 0 else len(findings)]:
            print("%s: %s [%s] %s" % (f["id"], f["verdict"], f["class"] or "-", f["detail"]))
        if len(findings) > args.show > 0:
            print("... %d more (--show 0 for all)" % (len(findings) - args.show))
    return 1 if args.gate and counts["disagree"] > 0 else 0


if __name__ == "__main__":
    sys.exit(main())
