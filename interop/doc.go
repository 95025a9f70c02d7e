// Package interop holds no code of its own: its tests drive Skillbox with real MCP clients, the
// MCP Inspector CLI, LangChain's MCP adapters, the AI SDK's MCP client and the OpenAI Agents SDK,
// over stdio (`skillbox mcp`) and streamable HTTP (`skillbox serve`, at /mcp), and have the
// official TypeScript SDK's client answer Skillbox's permission requests (elicitations). The
// clients are the Node.js project beside this file, pinned to exact versions in
// package-lock.json; README.md says which versions were tested and how to run them.
package interop
