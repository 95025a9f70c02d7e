// The OpenAI Agents SDK's MCP servers, used as an agent uses them: listTools() for the tools it
// offers the model, callTool() for a call (it hands back the content blocks only).
import { MCPServerStdio, MCPServerStreamableHttp } from '@openai/agents';
import { fromResult, play, version } from './lib.mjs';

const versions = {
  '@openai/agents': version('@openai/agents'),
  '@openai/agents-core': version('@openai/agents-core'),
  '@modelcontextprotocol/client': version('@modelcontextprotocol/client', '@openai/agents-core'),
};

// Its default timeouts (5 s to connect and list, 60 s a call) race a slow machine: these only
// guard against a hang (interop_test.go bounds the whole session too).
const timeouts = { clientSessionTimeoutSeconds: 240, timeout: 240_000 };

await play('@openai/agents', versions, async (transport, target) => {
  const server = transport === 'http'
    ? new MCPServerStreamableHttp({ name: 'skillbox', url: target.url, ...timeouts })
    : new MCPServerStdio({ name: 'skillbox', command: target.command, args: target.args, ...timeouts });
  await server.connect();
  return {
    listTools: async () => (await server.listTools()).map((t) => t.name),
    call: async (tool, args) => fromResult(await server.callTool(tool, args)),
    close: () => server.close(),
  };
});
