// An editor written with the official TypeScript SDK (@agentclientprotocol/sdk) drives
// `zero acp` through the scenario the end-to-end test checks (tests/acp_sdks.rs), and prints
// what it saw as one JSON object. Every line each side wrote is appended to the wire log, for
// the test to check against the protocol's JSON Schema.
//
// node client.mjs <sdk-dir> <wire-log> <workspace> <zero> [zero args...]

import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkDir, wireLog, workspace, zero, ...zeroArgs] = process.argv.slice(2);
const acp = await import(pathToFileURL(`${sdkDir}/dist/v1/stable/acp.js`).href);

const child = spawn(zero, ["acp", ...zeroArgs], { stdio: ["pipe", "pipe", "inherit"] });
const log = (direction) => (chunk) => appendFileSync(wireLog, chunk.toString().split("\n").filter((l) => l).map((l) => `${direction} ${l}\n`).join(""));
child.stdout.on("data", log("agent"));
const toAgent = new Writable({
  write(chunk, _encoding, done) {
    log("client")(chunk);
    child.stdin.write(chunk, done);
  },
});
const stream = acp.ndJsonStream(Writable.toWeb(toAgent), Readable.toWeb(child.stdout));

const updates = [];
const permissions = [];
// What the editor answers, permission request by permission request.
const answers = ["allow_once", "reject_once", "cancel"];
let sessionId = null;
let ctxRef = null;

const app = acp
  .client({ name: "zero-sdk-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    permissions.push({ toolCallId: params.toolCall.toolCallId, options: params.options.map((o) => o.kind) });
    const answer = answers.shift();
    if (answer === "cancel") {
      // The editor's stop button: the turn is cancelled, and the pending request with it.
      await ctxRef.notify(acp.methods.agent.session.cancel, { sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: answer } };
  });

const report = await app.connectWith(stream, async (ctx) => {
  ctxRef = ctx;
  const out = {};
  out.initialize = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
  });
  out.authenticate = await ctx.request(acp.methods.agent.authenticate, { methodId: "zero-provider" });
  const created = await ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
  sessionId = created.sessionId;
  out.newSession = created;
  out.prompts = [];
  for (const text of ["write a.txt", "write b.txt", "run a command"]) {
    updates.length = 0;
    const answer = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    out.prompts.push({ stopReason: answer.stopReason, updates: [...updates] });
  }
  out.permissions = permissions;
  updates.length = 0;
  out.setMode = await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "edit" });
  out.modeUpdates = [...updates];
  out.list = await ctx.request(acp.methods.agent.session.list, { cwd: workspace });
  updates.length = 0;
  out.load = await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: workspace, mcpServers: [] });
  out.loaded = [...updates];
  out.setConfigOption = await ctx.request(acp.methods.agent.session.setConfigOption, {
    sessionId,
    configId: "model",
    value: process.env.ZERO_TEST_OTHER_MODEL,
  });
  return out;
});

child.stdin.end();
const code = await new Promise((resolve) => child.on("exit", resolve));
report.exitCode = code;
report.sessionId = sessionId;
process.stdout.write(JSON.stringify(report) + "\n");
