// The AI SDK's MCP client (@ai-sdk/mcp, which replaced the ai package's
// experimental_createMCPClient): client.tools() gives AI SDK tools, and execute() is what
// generateText runs for a model's call.
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { fromResult, play, version } from './lib.mjs';

const versions = { '@ai-sdk/mcp': version('@ai-sdk/mcp') };

await play('@ai-sdk/mcp', versions, async (transport, target) => {
  const client = await createMCPClient({
    transport: transport === 'http'
      ? { type: 'http', url: target.url }
      : new Experimental_StdioMCPTransport({ command: target.command, args: target.args }),
  });
  const tools = await client.tools();
  let n = 0;
  return {
    listTools: async () => Object.keys(tools),
    call: async (name, args) => {
      if (!tools[name]) throw new Error(`tools() gave no tool ${name}`);
      return fromResult(await tools[name].execute(args, { toolCallId: `call_${++n}`, messages: [] }));
    },
    close: () => client.close(),
  };
});
