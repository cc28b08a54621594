#!/usr/bin/env python3
"""A dwarfcheck/2 consumer for tests/protocol_cfi.rs that declares `rows`
and `unwind` and answers each request with the outcome stored for its case
name in the JSON file named by its first argument ({"case": outcome});
a case not in the file is `unsupported`."""

import json
import sys

with open(sys.argv[1]) as f:
    ANSWERS = json.loads(f.read() or "{}")

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        reply = {"protocol": "dwarfcheck/2", "type": "hello", "name": "replay",
                 "supports": {"editions": ["dwarf5", "dwarf5-gnu", "hetero2020"], "expr": False,
                              "rows": True, "unwind": True}}
    else:
        outcome = ANSWERS.get(msg["case"], {"kind": "unsupported", "what": "no stored answer"})
        reply = {"protocol": "dwarfcheck/2", "type": "result", "id": msg["id"], "outcome": outcome}
    print(json.dumps(reply), flush=True)
