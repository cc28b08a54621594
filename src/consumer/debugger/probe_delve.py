# dwarfcheck's Delve probe (src/consumer/debugger/delve.rs runs it as
# `python3 probe_delve.py DIR DLV`). For each job of the JSON list in
# DIR/jobs.json it runs `DLV core EXECUTABLE CORE` with an init file that
# prints the variable `v`, and appends one JSON line to DIR/results.jsonl,
# in the format of the GDB and LLDB probes:
#   {"id": ..., "bytes": [int, ...]}    each byte of v
#   {"id": ..., "error": "message"}     what Delve said instead
# Delve prints an array as `[N]unsigned char [b0,b1,...]`, an element it
# cannot read as `(unreadable MESSAGE)`, a variable it cannot locate as
# `(unreadable MESSAGE)`, and a failed command as `INIT:LINE: MESSAGE`.
# The probe sets no time limit: the Rust side watches results.jsonl and
# kills the process group of a batch that stalls.
import json
import os
import re
import subprocess
import sys

DIR, DLV = sys.argv[1], sys.argv[2]
jobs = json.load(open(os.path.join(DIR, "jobs.json")))
out = open(os.path.join(DIR, "results.jsonl"), "a")
init = os.path.join(DIR, "delve-init")
with open(init, "w") as f:
    f.write("config max-array-values 8192\nprint v\nexit\n")

# Elements are decimal; on AArch64 Delve 1.20 prints an unsigned char
# 0xf0 as -16, so a sign is kept (the byte is the value modulo 256).
ELEMENT = re.compile(r"\(unreadable [^)]*\)|-?\d+|\.\.\.\+\d+ more")
# Delve names the init file by the path it was given (the full path of
# DIR/delve-init), so any path ending in the file's name matches.
FAILED = re.compile(r"^(?:\S*/)?delve-init:\d+: (.*)$")
# Most bytes of Delve's output kept per job (the last ones: the answer
# comes last); the rest is read and dropped, so memory stays bounded.
KEEP = 65536


def parse(text, job):
    for line in text.splitlines():
        line = line.strip()
        m = FAILED.match(line)
        if m:
            return {"error": m.group(1)}
        if line.startswith("(unreadable "):
            return {"error": line[len("(unreadable "):-1]}
        if job["shape"] == "pointer" and line.startswith("*"):
            if "unreadable" in line:
                return {"error": line}
            m = re.search(r"0x[0-9a-fA-F]+", line)
            if m:
                return {"bytes": list(int(m.group(0), 16).to_bytes(job["size"], "little"))}
        if job["shape"] == "bytes" and line.startswith("[") and "unsigned char [" in line:
            body = line[line.index("unsigned char [") + len("unsigned char ["):]
            got = []
            for e in ELEMENT.findall(body):
                if e.startswith("(unreadable "):
                    return {"error": e[len("(unreadable "):-1]}
                if e.startswith("..."):
                    return {"error": "delve elided elements: " + e}
                got.append(int(e) & 0xFF)
            if len(got) != job["size"]:
                return {"error": "delve showed %d of %d elements" % (len(got), job["size"])}
            return {"bytes": got}
    last = [l for l in text.splitlines() if l.strip()]
    return {"error": "no answer: " + (last[-1] if last else "no output")}


for job in jobs:
    cmd = [DLV, "core", job["executable"], job["core"], "--allow-non-terminal-interactive=true", "--init", init]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=DIR)
    kept = b""
    while True:
        chunk = p.stdout.read(8192)
        if not chunk:
            break
        kept = (kept + chunk)[-KEEP:]
    rc = p.wait()
    res = parse(kept.decode("utf-8", "replace"), job)
    if rc < 0:
        res = {"error": "delve ended by signal %d" % -rc}
    res["id"] = job["id"]
    out.write(json.dumps(res) + "\n")
    out.flush()
