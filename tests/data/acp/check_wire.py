"""Checks every message `zero acp` wrote against the protocol's JSON Schema (schema/v1/schema.json
as the official TypeScript SDK ships it), each against the definition of its method: a request's
params, a notification's params, a response's result (by the method of the request it answers),
an error response's error. The definitions name their method (`x-method`), so nothing here
lists them. Prints one line per message that does not validate, and how many were checked.

python check_wire.py <schema.json> <wire-log>

Each line of the wire log is `client <json>` or `agent <json>`.
"""

import json
import sys

from jsonschema import Draft202012Validator

schema_path, wire_path = sys.argv[1:]
with open(schema_path) as f:
    defs = json.load(f)["$defs"]

by_method = {}
for name, definition in defs.items():
    method = definition.get("x-method")
    if not method:
        continue
    for suffix, kind in (("Request", "request"), ("Response", "response"), ("Notification", "notification")):
        if name.endswith(suffix):
            by_method[(kind, method)] = name


def validator(name):
    return Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{name}"})


asked = {}
problems = []
checked = 0
with open(wire_path) as wire:
    for number, line in enumerate(wire, 1):
        side, _, text = line.rstrip("\n").partition(" ")
        try:
            message = json.loads(text)
        except ValueError:
            if side == "agent":
                problems.append(f"line {number}: not JSON: {text[:200]}")
            continue
        if not isinstance(message, dict):
            continue
        if side == "client":
            if "method" in message and "id" in message:
                asked[json.dumps(message["id"])] = message["method"]
            continue
        if message.get("jsonrpc") != "2.0":
            problems.append(f"line {number}: no jsonrpc 2.0: {text[:200]}")
            continue
        method = message.get("method")
        if method is not None:
            kind = "request" if "id" in message else "notification"
            target, value = by_method.get((kind, method)), message.get("params")
        elif "error" in message:
            target, value = "Error", message["error"]
        else:
            answered = asked.get(json.dumps(message.get("id")))
            target, value = by_method.get(("response", answered)), message.get("result")
        if target is None:
            problems.append(f"line {number}: no definition for {text[:200]}")
            continue
        errors = sorted(validator(target).iter_errors(value), key=lambda e: list(e.path))
        checked += 1
        for error in errors[:3]:
            where = "/".join(str(p) for p in error.absolute_path)
            problems.append(f"line {number} ({target} at /{where}): {error.message[:300]}")

for problem in problems:
    print(problem)
print(f"checked {checked} messages")
sys.exit(1 if problems else 0)
