// LangChain's MCP adapters: MultiServerMCPClient.getTools() gives LangChain tools, and
// tool.invoke() is what an agent runs for a model's call. A tool error is thrown (ToolException).
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { play, version } from './lib.mjs';

const versions = {
  '@langchain/mcp-adapters': version('@langchain/mcp-adapters'),
  '@langchain/core': version('@langchain/core'),
  '@modelcontextprotocol/sdk': version('@modelcontextprotocol/sdk', '@langchain/mcp-adapters'),
};

// fromOutput reads what invoke returned: a string, or a content block (with structuredContent
// when the tool sent one), or an array of blocks.
function fromOutput(out) {
  const blocks = typeof out === 'string' ? [{ type: 'text', text: out }] : [out].flat();
  return {
    text: blocks.filter((b) => b?.type === 'text').map((b) => b.text).join('\n'),
    structured: blocks.find((b) => b?.structuredContent)?.structuredContent ?? null,
    isError: null, // an error is thrown instead
  };
}

await play('@langchain/mcp-adapters', versions, async (transport, target) => {
  // A tool call's timeout only guards against a hang (interop_test.go bounds the session too).
  const server = transport === 'http'
    ? { transport: 'http', url: target.url, defaultToolTimeout: 240_000 }
    : { transport: 'stdio', command: target.command, args: target.args, defaultToolTimeout: 240_000 };
  const client = new MultiServerMCPClient({ mcpServers: { skillbox: server }, throwOnLoadError: true });
  const tools = await client.getTools();
  return {
    listTools: async () => tools.map((t) => t.name),
    call: async (name, args) => {
      const tool = tools.find((t) => t.name === name);
      if (!tool) throw new Error(`getTools() gave no tool ${name}`);
      return fromOutput(await tool.invoke(args));
    },
    close: () => client.close(),
  };
});
