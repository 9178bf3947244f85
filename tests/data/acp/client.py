"""An editor written with the official Python SDK (agent-client-protocol) drives `zero acp`
through the scenario the end-to-end test checks (tests/acp_sdks.rs), and prints what it saw as
one JSON object. Every message each side wrote is appended to the wire log, for the test to
check against the protocol's JSON Schema.

python client.py <wire-log> <workspace> <zero> [zero args...]
"""

import asyncio
import json
import os
import sys

import acp
from acp.connection import StreamDirection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    RequestPermissionResponse,
    TextContentBlock,
)

WIRE, WORKSPACE, ZERO, *ZERO_ARGS = sys.argv[1:]


def plain(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class Editor:
    """The client side: it keeps the updates and answers permission requests in turn."""

    def __init__(self):
        self.updates = []
        self.permissions = []
        self.answers = ["allow_once", "reject_once", "cancel"]
        self.conn = None
        self.session_id = None

    def on_connect(self, conn):
        self.conn = conn

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(plain(update))

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append(
            {"toolCallId": tool_call.tool_call_id, "options": [o.kind for o in options]}
        )
        answer = self.answers.pop(0)
        if answer == "cancel":
            # The editor's stop button: the turn is cancelled, the pending request with it.
            await self.conn.cancel(session_id=session_id)
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )


def log(event):
    side = "client" if event.direction == StreamDirection.OUTGOING else "agent"
    with open(WIRE, "a") as wire:
        wire.write(f"{side} {json.dumps(event.message)}\n")


async def main():
    editor = Editor()
    out = {}
    # The SDK passes a few variables only unless told: zero gets the test's whole environment.
    async with acp.spawn_agent_process(
        editor, ZERO, "acp", *ZERO_ARGS, env=dict(os.environ), observers=[log]
    ) as (conn, process):
        caps = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=False, write_text_file=False)
        )
        out["initialize"] = plain(
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=caps)
        )
        out["authenticate"] = plain(await conn.authenticate(method_id="zero-provider"))
        created = await conn.new_session(cwd=WORKSPACE, mcp_servers=[])
        session = created.session_id
        editor.session_id = session
        out["newSession"] = plain(created)
        out["prompts"] = []
        for text in ["write a.txt", "write b.txt", "run a command"]:
            editor.updates.clear()
            answer = await conn.prompt(
                session_id=session, prompt=[TextContentBlock(type="text", text=text)]
            )
            out["prompts"].append({"stopReason": answer.stop_reason, "updates": list(editor.updates)})
        out["permissions"] = editor.permissions
        editor.updates.clear()
        out["setMode"] = plain(await conn.set_session_mode(session_id=session, mode_id="edit"))
        out["modeUpdates"] = list(editor.updates)
        out["list"] = plain(await conn.list_sessions(cwd=WORKSPACE))
        editor.updates.clear()
        out["load"] = plain(
            await conn.load_session(cwd=WORKSPACE, session_id=session, mcp_servers=[])
        )
        out["loaded"] = list(editor.updates)
        changed = await conn.set_config_option(
            config_id="model", session_id=session, value=os.environ["ZERO_TEST_OTHER_MODEL"]
        )
        out["setConfigOption"] = plain(changed)
        out["sessionId"] = session
        process.stdin.close()
        out["exitCode"] = await process.wait()
    print(json.dumps(out))


asyncio.run(main())
