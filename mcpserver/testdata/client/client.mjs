// Drives a skillbox MCP server with the official TypeScript SDK, over stdio or streamable HTTP:
//
//   node client.mjs stdio <command> [args...]   spawns the command (skillbox mcp ...)
//   node client.mjs http <url>                  connects to the MCP endpoint at url
//
// The server must serve the bundled skills under the default policy. The client lists the tools,
// calls skill_word_count (structuredContent.words must be 3; its debug log must arrive as a log
// notification), calls failing tools (isError: permission_denied, invalid_args), lists the
// resources and reads skill://hello/SKILL.md, and lists the prompts. It prints a JSON summary on
// stdout and exits 1 on any mismatch (2 on a usage error).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === 'stdio' && rest.length > 0) {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'inherit' });
} else if (mode === 'http' && rest.length === 1) {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else {
  console.error('usage: node client.mjs stdio <command> [args...] | node client.mjs http <url>');
  process.exit(2);
}

const failures = [];
const check = (ok, what, got) => {
  if (!ok) failures.push(got === undefined ? what : `${what}: got ${JSON.stringify(got)}`);
  return ok;
};
const textOf = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

const summary = { mode };
const logs = [];
const client = new Client({ name: 'skillbox-official-client-test', version: '1.0.0' });
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));

try {
  await client.connect(transport);
  summary.server = client.getServerVersion();
  const caps = client.getServerCapabilities() ?? {};
  check(caps.tools?.listChanged === true, 'tools capability with listChanged', caps.tools);
  check(caps.resources?.listChanged === true, 'resources capability with listChanged', caps.resources);
  check(caps.prompts !== undefined && caps.logging !== undefined, 'prompts and logging capabilities', caps);

  // tools/list
  const { tools } = await client.listTools();
  summary.tools = tools.map((t) => t.name);
  const wc = tools.find((t) => t.name === 'skill_word_count');
  if (check(wc !== undefined, 'skill_word_count is listed', summary.tools)) {
    check(wc.inputSchema?.type === 'object' && wc.inputSchema.properties?.text?.type === 'string', 'skill_word_count input schema', wc.inputSchema);
    check(wc.outputSchema?.type === 'object', 'skill_word_count output schema', wc.outputSchema);
    check(wc.annotations?.readOnlyHint === true, 'skill_word_count readOnlyHint', wc.annotations);
  }

  // tools/call: success, with its log
  await client.setLoggingLevel('debug');
  const ok = await client.callTool({ name: 'skill_word_count', arguments: { text: 'a b a' } });
  summary.wordCount = ok.structuredContent;
  check(ok.isError !== true, 'skill_word_count succeeds', textOf(ok));
  check(ok.structuredContent?.words === 3, 'structuredContent.words === 3', ok.structuredContent);
  let parsed;
  try {
    parsed = JSON.parse(textOf(ok));
  } catch {
    parsed = undefined;
  }
  check(parsed?.words === 3, 'the text content is the same JSON', textOf(ok));
  // Notifications may be handled after the response: give them a moment.
  for (let i = 0; i < 50 && !logs.some((l) => l.logger === 'word-count'); i++) await new Promise((r) => setTimeout(r, 20));
  summary.logs = logs;
  check(logs.some((l) => l.logger === 'word-count' && l.level === 'debug' && /counted 3 words/.test(l.data)), 'a debug log notification from word-count', logs);

  // tools/call: failures are tool errors, not protocol errors
  const denied = await client.callTool({ name: 'skill_http_get', arguments: { url: 'https://example.com/' } });
  summary.denied = textOf(denied);
  check(denied.isError === true, 'skill_http_get under the default policy has isError', denied);
  check(textOf(denied).startsWith('permission_denied: '), 'its text is "permission_denied: ..."', textOf(denied));
  const invalid = await client.callTool({ name: 'skill_word_count', arguments: { text: 5 } });
  summary.invalid = textOf(invalid);
  check(invalid.isError === true && textOf(invalid).startsWith('invalid_args: '), 'invalid arguments are an invalid_args tool error', invalid);

  // resources
  const { resources } = await client.listResources();
  summary.resources = resources.map((r) => r.uri);
  const hello = resources.find((r) => r.uri === 'skill://hello/SKILL.md');
  check(hello?.mimeType === 'text/markdown', 'skill://hello/SKILL.md is listed as text/markdown', hello);
  const read = await client.readResource({ uri: 'skill://hello/SKILL.md' });
  const contents = read.contents?.[0] ?? {};
  summary.helloSkillMd = (contents.text ?? '').split('\n')[0];
  check(contents.uri === 'skill://hello/SKILL.md' && contents.mimeType === 'text/markdown', 'SKILL.md contents uri and mimeType', contents);
  check(typeof contents.text === 'string' && contents.text.startsWith('---\nname: hello\n') && contents.text.includes('\n# hello'), 'SKILL.md whole, frontmatter included', contents.text);
  let traversal;
  try {
    await client.readResource({ uri: 'skill://hello/../word-count/skill.json' });
    traversal = 'read';
  } catch (err) {
    traversal = String(err?.message ?? err);
  }
  summary.traversal = traversal;
  check(traversal.includes('..'), 'a ".." path is refused', traversal);

  // prompts: the bundled skills are all executable, so none
  const { prompts } = await client.listPrompts();
  summary.prompts = prompts.map((p) => p.name);
  check(Array.isArray(prompts), 'prompts/list answers', prompts);
} catch (err) {
  failures.push(`protocol error: ${err?.stack ?? err}`);
} finally {
  try {
    await client.close();
  } catch {
    // the server may have gone already
  }
}

summary.failures = failures;
console.log(JSON.stringify(summary, null, 2));
process.exit(failures.length === 0 ? 0 : 1);
