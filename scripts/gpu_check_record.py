#!/usr/bin/env python3
"""Writes one figure of scripts/gpu-check.sh into its JSON file, at once and atomically.

    gpu_check_record.py FILE KEY VALUE            VALUE: JSON, or else kept as a string
    gpu_check_record.py FILE KEY --gtest REPORT   a gtest JSON report, summarised
    gpu_check_record.py FILE KEY --json-line LOG  the last line of LOG that parses as JSON

KEY is a dotted path ("perf.Ant-v5.n4096"); the objects on the way are created. The file is
rewritten through a temporary file and a rename, so a run cut short by its time limit leaves
every figure recorded so far in a readable file. Standard library only.
"""
import json
import os
import sys


def gtest_summary(path):
    try:
        report = json.load(open(path))
    except (OSError, ValueError) as e:
        return {"status": "no report", "why": str(e)}
    failed, skipped = [], 0
    for suite in report.get("testsuites", []):
        for test in suite.get("testsuite", []):
            name = f"{suite['name']}.{test['name']}"
            if test.get("failures"):
                failed.append(name)
            elif test.get("result") == "SKIPPED" or test.get("status") == "NOTRUN":
                skipped += 1
    total = report.get("tests", 0)
    return {"tests": total, "passed": total - len(failed) - skipped, "failed": len(failed),
            "skipped": skipped, "failed_names": failed[:20]}


def last_json_line(path):
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError as e:
        return {"status": "no output", "why": str(e)}
    for line in reversed(lines):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return {"status": "error", "last_line": lines[-1][-300:] if lines else ""}


def main(argv):
    if len(argv) != 4 and not (len(argv) == 5 and argv[3] in ("--gtest", "--json-line")):
        sys.exit(__doc__)
    path, key = argv[1], argv[2]
    if argv[3] == "--gtest":
        value = gtest_summary(argv[4])
    elif argv[3] == "--json-line":
        value = last_json_line(argv[4])
    else:
        try:
            value = json.loads(argv[3])
        except ValueError:
            value = argv[3]
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        doc = {}
    node = doc
    parts = key.split(".")
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[parts[-1]] = value
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


if __name__ == "__main__":
    main(sys.argv)
