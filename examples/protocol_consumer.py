#!/usr/bin/env python3
"""A tiny DWARF expression consumer speaking dwarfcheck's process protocol.

Protocol `dwarfcheck/1` (docs/protocol.md): one JSON object per line on
stdin and stdout. dwarfcheck sends a `hello`, this program answers with its
name and what it supports, then answers each `evaluate` request with a
`result` holding an outcome.

It evaluates a small subset of DWARF 5 and answers `unsupported` for
anything else:
  DW_OP_lit0..31, DW_OP_const1u/1s/2u/2s/4u/4s/8u/8s, DW_OP_constu/consts,
  DW_OP_plus, DW_OP_breg0..31 (reading the request's registers),
  DW_OP_stack_value and DW_OP_reg0..31 (as the last operation).

Use it as a TEMPLATE for a consumer in Python: keep `main` and the message
handling, replace `evaluate` with a call into your own DWARF library.

Run it:  dwarfcheck run --consumer 'cmd:python3 examples/protocol_consumer.py'
Standard library only.
"""

import json
import sys

PROTOCOL = "dwarfcheck/1"
NAME = "example-python"


class Unsupported(Exception):
    """Raised for anything outside the subset; becomes `unsupported`."""


def uleb(data, pos):
    """Decodes an unsigned LEB128 at `pos`; returns (value, next position)."""
    value, shift = 0, 0
    while True:
        if pos >= len(data):
            raise Unsupported("truncated LEB128 operand")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def sleb(data, pos):
    """Decodes a signed LEB128 at `pos`; returns (value, next position)."""
    start = pos
    value, pos = uleb(data, pos)
    bits = 7 * (pos - start)
    if value >> (bits - 1) & 1:
        value -= 1 << bits
    return value, pos


# DW_OP_const<n><u|s>: opcode -> (operand size in bytes, signed)
CONSTS = {0x08: (1, False), 0x09: (1, True), 0x0A: (2, False), 0x0B: (2, True),
          0x0C: (4, False), 0x0D: (4, True), 0x0E: (8, False), 0x0F: (8, True)}


def evaluate(req):
    """Evaluates one request; returns the outcome object (a dict)."""
    target, ctx = req["target"], req["context"]
    if "expr_bytes" not in req or "attribute" in req:
        raise Unsupported("attributes and location lists")
    if ctx.get("object") is not None or ctx.get("initial_stack"):
        raise Unsupported("an object or an initial stack")
    order = "big" if target["endian"] == "big" else "little"
    size = target["address_size"]  # bytes: the generic type's size
    mask = (1 << (8 * size)) - 1
    code = bytes.fromhex(req["expr_bytes"])
    # The stack: ("value", int) | ("memory", address) | ("register", n) |
    # ("implicit", bytes in memory order).
    stack = []
    pos = 0
    while pos < len(code):
        op = code[pos]
        pos += 1
        if 0x30 <= op <= 0x4F:  # DW_OP_lit<n>
            stack.append(("value", op - 0x30))
        elif op in CONSTS:
            n, signed = CONSTS[op]
            if n > size or pos + n > len(code):
                raise Unsupported("constant wider than an address, or truncated")
            v = int.from_bytes(code[pos:pos + n], order, signed=signed)
            pos += n
            stack.append(("value", v & mask))
        elif op in (0x10, 0x11):  # DW_OP_constu, DW_OP_consts
            v, pos = (uleb if op == 0x10 else sleb)(code, pos)
            stack.append(("value", v & mask))
        elif op == 0x22:  # DW_OP_plus
            if len(stack) < 2:
                raise Unsupported("stack underflow")
            b, a = as_value(stack.pop()), as_value(stack.pop())
            stack.append(("value", (a + b) & mask))
        elif 0x70 <= op <= 0x8F:  # DW_OP_breg<n>: a memory location
            off, pos = sleb(code, pos)
            stack.append(("memory", (read_register(req, op - 0x70, order) + off) & mask))
        elif 0x50 <= op <= 0x6F or op == 0x9F:  # DW_OP_reg<n>, DW_OP_stack_value
            if pos != len(code):
                raise Unsupported("operations after DW_OP_reg or DW_OP_stack_value")
            if op == 0x9F:
                if not stack:
                    raise Unsupported("stack underflow")
                v = as_value(stack.pop())
                stack.append(("implicit", v.to_bytes(size, order)))
            else:
                stack.append(("register", op - 0x50))
        else:
            raise Unsupported("operation 0x%02x" % op)
    if not stack:
        raise Unsupported("an empty result")
    return result(stack[-1], ctx.get("result"), size, target["endian"] == "big")


def as_value(entry):
    """An entry used as a value: a memory location stands for its address."""
    kind, v = entry
    if kind == "value":
        return v
    if kind == "memory":
        return v
    raise Unsupported("a register or implicit location used as a value")


def read_register(req, regno, order):
    """The value of register `regno` (an address-sized register only)."""
    regs = req["context"].get("registers", {})
    if str(regno) not in regs:
        raise Unsupported("register %d has no value here" % regno)
    raw = bytes.fromhex(regs[str(regno)])
    if len(raw) != req["target"]["address_size"]:
        raise Unsupported("register %d is not address-sized" % regno)
    return int.from_bytes(raw, order)


def result(entry, kind, size, big_endian):
    """The outcome object for the top entry and the requested result kind."""
    what, v = entry
    if kind == "value":
        if what not in ("value", "memory"):
            raise Unsupported("a location where a value is required")
        what = "value"
    elif kind == "location" and what == "value":
        what = "memory"  # a value converts to a memory location at it
    if what == "value":
        generic = {"encoding": "generic", "bits": 8 * size, "big_endian": big_endian, "vector_size": 1}
        # Value bytes are hex written most significant byte first.
        return {"kind": "value", "ty": generic, "bytes": "%0*x" % (2 * size, v)}
    if what == "memory":
        source = {"storage": "memory", "aspace": 0, "bit_addr": 8 * v}
    elif what == "register":
        source = {"storage": "register", "regno": v, "bit_offset": 0}
    else:
        # Implicit storage bytes are written last byte first too.
        source = {"storage": "implicit", "bytes": v[::-1].hex(), "bit_offset": 0}
    return {"kind": "location", "places": [{"simple": source}]}


def handle(msg):
    """The reply to one message."""
    if msg.get("type") == "hello":
        return {"protocol": PROTOCOL, "type": "hello", "name": NAME,
                "supports": {"editions": ["dwarf5"], "expr": True, "cfi": False}}
    try:
        outcome = evaluate(msg)
    except Unsupported as e:
        outcome = {"kind": "unsupported", "what": str(e)}
    return {"protocol": PROTOCOL, "type": "result", "id": msg["id"], "outcome": outcome}


def main(handler=handle):
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(handler(json.loads(line)), separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
