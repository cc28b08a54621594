#!/usr/bin/env python3
"""The example consumer with one deliberate bug, for tests/protocol.rs:
every value it returns is one more than it should be (memory addresses and
register numbers are left alone)."""

import importlib.util
import os

here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, "..", "..", "examples", "protocol_consumer.py")
spec = importlib.util.spec_from_file_location("protocol_consumer", path)
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)


def handle(msg):
    reply = example.handle(msg)
    if msg.get("type") == "hello":
        reply["name"] = "off-by-one"
        return reply
    out = reply["outcome"]
    if out["kind"] == "value":
        width = len(out["bytes"])
        out["bytes"] = "%0*x" % (width, (int(out["bytes"], 16) + 1) % (16 ** width))
    return reply


if __name__ == "__main__":
    example.main(handle)
