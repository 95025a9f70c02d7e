// A person behind the official TypeScript MCP SDK's Client, answering Skillbox's permission
// requests (form elicitations, elicitation/create) the way a scenario says, for elicit_test.go.
// It connects, calls one tool, and prints one JSON report: what it was asked (each
// elicitation's message, requestedSchema and _meta), what it answered, and what the call
// returned, with its _meta (skillbox/runId). The script only reports; the test judges.
//
// Usage: node clients/elicit.mjs SCENARIO stdio COMMAND [ARG...]
//        node clients/elicit.mjs SCENARIO http URL
// SCENARIO is JSON: {"tool": "...", "args": {...}, "answer": ANSWER}. ANSWER is the
// ElicitResult every elicitation gets: {"action": "accept", "content": {"decision": "once"}}
// (allow for this run), {"action": "accept", "content": {"decision": "for", "minutes": 30}}
// (allow for a time), {"action": "decline"} (refuse), {"action": "cancel"} (dismiss the form);
// or null, a client without elicitation, which declares no capability and registers no handler.
// "capabilities", when given, is what the client declares instead of {elicitation: {form: {}}}
// (with an answer): {elicitation: {}} as before forms and URLs were told apart, {elicitation:
// {url: {}}} for URLs alone, or {elicitation: {form: {applyDefaults: true}}} for an SDK that
// fills in the form's defaults.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { version } from './lib.mjs';

const [scenarioArg, transport, ...rest] = process.argv.slice(2);
if (!scenarioArg || !['stdio', 'http'].includes(transport) || rest.length === 0) {
  throw new Error('usage: node clients/elicit.mjs SCENARIO (stdio COMMAND [ARG...] | http URL)');
}
const scenario = JSON.parse(scenarioArg);
const elicits = scenario.answer != null;

const report = {
  client: 'elicit',
  versions: { '@modelcontextprotocol/sdk': version('@modelcontextprotocol/sdk') },
  node: process.version,
  transport,
  elicitation: elicits,
  protocolVersion: null,
  asked: [],
  result: null,
};

const client = new Client(
  { name: 'skillbox-interop-elicit', version: '1.0.0' },
  { capabilities: scenario.capabilities ?? (elicits ? { elicitation: { form: {} } } : {}) },
);
if (elicits) {
  // The SDK wraps this handler: it checks the request (its requestedSchema among it) and the
  // mode against the capabilities first, and the answer after, filling in the form's defaults
  // when the client declared applyDefaults. What the server gets is in the run's record.
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const { mode, message, requestedSchema, _meta } = request.params;
    report.asked.push({ mode: mode ?? null, message, requestedSchema, meta: _meta ?? null, answer: scenario.answer });
    return structuredClone(scenario.answer);
  });
}

try {
  const t = transport === 'http'
    ? new StreamableHTTPClientTransport(new URL(rest[0]))
    // The SDK hands a stdio server a bare environment (getDefaultEnvironment): whatever it
    // needs goes on its command line.
    : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' });
  // The version the server agreed to, as the client hands it to its transport.
  const setVersion = t.setProtocolVersion?.bind(t);
  t.setProtocolVersion = (v) => {
    report.protocolVersion = v;
    setVersion?.(v);
  };
  await client.connect(t);
  try {
    // A person may take their time: the request's own bound is the server's (ask.timeoutMs);
    // this is only a hang guard, longer than it.
    const r = await client.callTool({ name: scenario.tool, arguments: scenario.args ?? {} }, undefined, { timeout: 5 * 60_000 });
    report.result = {
      text: (r.content ?? []).filter((c) => c?.type === 'text').map((c) => c.text).join('\n'),
      isError: r.isError ?? false,
      meta: r._meta ?? null,
    };
  } catch (e) {
    report.result = { thrown: String(e?.message ?? e) };
  }
} catch (e) {
  report.error = String(e?.stack ?? e);
} finally {
  try {
    await client.close();
  } catch (e) {
    report.closeError = String(e?.message ?? e);
  }
}
process.stdout.write(JSON.stringify(report) + '\n');
process.exitCode = report.error ? 1 : 0;
