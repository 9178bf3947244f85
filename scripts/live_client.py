#!/usr/bin/env python3
"""A short client for `zero exec --live`: a two-turn conversation with one approval.

It starts zero in live mode on the scripted provider (scripts/live_demo.json), in a fresh
temporary workspace, sends a prompt, answers the permission request (writes are allowed,
anything else is denied), sends a second prompt when the first turn ends, closes stdin, and
checks that the stream has no gap (`seq`) and that `run_end.eventCount` counts every line.
It prints the conversation and exits with zero's exit code.

    python3 scripts/live_client.py [--zero PATH]
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPTS = ["Write a note that says to remember the milk.", "What does the note say?"]


def main():
    zero = sys.argv[2] if sys.argv[1:2] == ["--zero"] else os.path.join(ROOT, "target", "debug", "zero")
    workspace = tempfile.mkdtemp(prefix="zero-live-demo-")
    proc = subprocess.Popen(
        [zero, "exec", "--provider", "scripted", "--script", os.path.join(ROOT, "scripts", "live_demo.json"),
         "-C", workspace, "--ephemeral", "-i", "stream-json", "-o", "stream-json",
         "--live", "--approvals", "stdin", "--approval-timeout-ms", "10000"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(event):
        proc.stdin.write(json.dumps({"schemaVersion": 2, **event}) + "\n")
        proc.stdin.flush()

    prompts = list(PROMPTS)
    seq = 0
    for line in proc.stdout:
        event = json.loads(line)
        seq += 1
        if event["seq"] != seq:
            sys.exit(f"a line is missing: seq {event['seq']} where {seq} was due")
        kind = event["type"]
        if kind == "run_start":
            print(f"> {prompts[0]}")
            send({"type": "prompt", "content": prompts.pop(0)})
        elif kind == "permission_request":
            decision = "allow" if event["sideEffect"] == "write" else "deny"
            print(f"[approval] {event['name']} ({event['sideEffect']}) -> {decision}")
            send({"type": "permission_response", "requestId": event["requestId"], "decision": decision})
        elif kind == "tool_result":
            print(f"[tool] {event['name']} {event['status']}")
        elif kind == "final":
            print(f"< {event['text']}")
        elif kind == "error":
            print(f"[error] {event['code']}: {event['message']}")
        elif kind == "turn_end":
            if prompts:
                print(f"> {prompts[0]}")
                send({"type": "prompt", "content": prompts.pop(0)})
            else:
                proc.stdin.close()
        elif kind == "run_end":
            if event["eventCount"] != seq:
                sys.exit(f"eventCount {event['eventCount']} but {seq} lines")
            print(f"[end] {event['status']}, exit {event['exitCode']}, {seq} lines")
    code = proc.wait()
    try:
        with open(os.path.join(workspace, "notes.txt")) as note:
            print(f"notes.txt: {note.read().strip()}")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
