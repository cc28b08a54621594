#!/usr/bin/env python3
"""Validates a `dwarfcheck export-suite` export against its JSON Schemas
(specs/suite-schema/, draft 2020-12): index.json against index.schema.json,
every case file the index names against case-file.schema.json.

Exit status: 0 when every file is valid, 1 when one is not (each error
printed), 2 on the validator's own errors (missing file, no jsonschema).

Usage: suite_validate.py EXPORT_DIR [SCHEMA_DIR]
"""

import json
import os
import sys


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    export = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    schemas = sys.argv[2] if len(sys.argv) == 3 else os.path.join(here, "..", "specs", "suite-schema")
    try:
        import jsonschema
    except ImportError as e:
        print("suite_validate: jsonschema is not installed: %s" % e, file=sys.stderr)
        return 2

    def load(path):
        try:
            with open(path, "rb") as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            print("suite_validate: cannot read %s: %s" % (path, e), file=sys.stderr)
            sys.exit(2)

    validators = {}
    for name in ("index", "case-file"):
        schema = load(os.path.join(schemas, name + ".schema.json"))
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[name] = jsonschema.Draft202012Validator(schema)

    bad = 0
    checked = 0

    def validate(kind, path):
        nonlocal bad, checked
        checked += 1
        for err in sorted(validators[kind].iter_errors(load(path)), key=lambda e: list(e.absolute_path))[:10]:
            bad += 1
            where = "/".join(str(p) for p in err.absolute_path)
            print("%s: /%s: %s" % (path, where, err.message[:300]))

    index_path = os.path.join(export, "index.json")
    validate("index", index_path)
    index = load(index_path)
    for path in sorted({e.get("path") for e in index.get("cases", []) if isinstance(e, dict) and "path" in e}):
        validate("case-file", os.path.join(export, path))
    print("suite_validate: %d file(s) checked, %d error(s)" % (checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
