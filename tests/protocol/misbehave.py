#!/usr/bin/env python3
"""A protocol consumer that misbehaves on purpose, for tests/protocol.rs.

It answers the handshake properly, then reacts to the case name of each
`evaluate` request:
  garbage   -> a line that is not JSON
  wrong-id  -> a well-formed result for another request id
  crash     -> dies by SIGKILL without replying
  hang      -> never replies (sleeps)
  flood     -> a reply line longer than the line cap the test sets
  slow-*    -> `unsupported` after 100 ms
  anything else -> `unsupported`
With the environment variable PIDS set, it first appends its process id
to the file PIDS names (to count the children of a pool).
"""

import json
import os
import signal
import sys
import time

if os.environ.get("PIDS"):
    with open(os.environ["PIDS"], "a") as f:
        f.write("%d\n" % os.getpid())

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        reply = {"protocol": "dwarfcheck/1", "type": "hello", "name": "misbehave",
                 "supports": {"editions": ["dwarf5"], "expr": True}}
        print(json.dumps(reply), flush=True)
        continue
    case = msg["case"]
    if case == "garbage":
        print("this is not JSON", flush=True)
    elif case == "wrong-id":
        print(json.dumps({"protocol": "dwarfcheck/1", "type": "result", "id": msg["id"] + 1000,
                          "outcome": {"kind": "unsupported", "what": "late"}}), flush=True)
    elif case == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    elif case == "hang":
        time.sleep(3600)
    elif case.startswith("slow-"):
        time.sleep(0.1)
        print(json.dumps({"protocol": "dwarfcheck/1", "type": "result", "id": msg["id"],
                          "outcome": {"kind": "unsupported", "what": "on purpose"}}), flush=True)
    elif case == "flood":
        print("x" * 100000, flush=True)
    else:
        print(json.dumps({"protocol": "dwarfcheck/1", "type": "result", "id": msg["id"],
                          "outcome": {"kind": "unsupported", "what": "on purpose"}}), flush=True)
