// What every client script shares: it reads the command line, plays the plan interop_test.go hands
// it through one client's adapter, and prints one JSON report on stdout. The scripts only report
// what their client returned; interop_test.go decides whether that is right.
//
// Usage: node clients/<client>.mjs PLAN stdio COMMAND [ARG...]
//        node clients/<client>.mjs PLAN http URL
// PLAN is JSON: {"calls": [{"name": "...", "tool": "...", "args": {...}}, ...]}.

import { existsSync, readFileSync } from 'node:fs';

const root = new URL('../', import.meta.url);

// version is the installed version of pkg, as a dependency of parent when parent has its own
// copy of it (node_modules/<parent>/node_modules/<pkg>), else the top-level one.
export function version(pkg, parent) {
  const paths = parent ? [`node_modules/${parent}/node_modules/${pkg}`] : [];
  paths.push(`node_modules/${pkg}`);
  for (const p of paths) {
    const file = new URL(`${p}/package.json`, root);
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')).version;
  }
  return null;
}

// fromResult turns an MCP CallToolResult, or a bare array of its content blocks, into what the
// report says of a call: the text the client surfaced, the structured value if it kept one, and
// isError if it told (null when it did not say).
export function fromResult(r) {
  const content = Array.isArray(r) ? r : (r?.content ?? []);
  return {
    text: content.filter((c) => c?.type === 'text').map((c) => c.text).join('\n'),
    structured: Array.isArray(r) ? null : (r?.structuredContent ?? null),
    isError: Array.isArray(r) ? null : (r?.isError ?? false),
  };
}

function parseArgs(argv) {
  const [plan, transport, ...rest] = argv;
  if (!plan || !['stdio', 'http'].includes(transport) || rest.length === 0) {
    throw new Error('usage: node clients/<client>.mjs PLAN (stdio COMMAND [ARG...] | http URL)');
  }
  const target = transport === 'http' ? { url: rest[0] } : { command: rest[0], args: rest.slice(1) };
  return { plan: JSON.parse(plan), transport, target };
}

function message(e) {
  return String(e?.message ?? e);
}

// play connects with open(transport, target), which returns a session of three methods:
// listTools() (the tool names), call(tool, args) (a fromResult shape) and close(). A call that
// throws is reported with what it threw: some clients throw for a tool error.
export async function play(client, versions, open) {
  const { plan, transport, target } = parseArgs(process.argv.slice(2));
  const report = { client, versions, node: process.version, transport, tools: null, calls: {} };
  let session;
  try {
    session = await open(transport, target);
    report.tools = await session.listTools();
    for (const c of plan.calls) {
      try {
        report.calls[c.name] = await session.call(c.tool, c.args);
      } catch (e) {
        report.calls[c.name] = { thrown: message(e) };
      }
    }
  } catch (e) {
    report.error = String(e?.stack ?? e);
  } finally {
    if (session) {
      try {
        await session.close();
      } catch (e) {
        report.closeError = message(e);
      }
    }
  }
  process.stdout.write(JSON.stringify(report) + '\n');
  process.exitCode = report.error ? 1 : 0;
}
