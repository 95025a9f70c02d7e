// Package agent holds no code: its subpackages turn a catalog of skills into what an agent
// backend hands a model, one concern each, so a face imports only what it uses.
//
//   - [github.com/skillbox-dev/skillbox/agent/tooldef]: tool definitions in each vendor's shape
//     (OpenAI, Anthropic, MCP, /.well-known/skills.json) and the vendor rules they keep. A face
//     that lists tools imports this.
//   - [github.com/skillbox-dev/skillbox/agent/toolset]: the progressive-disclosure toolset
//     (list_skills, load_skill, read_skill_resource, run_skill), the dispatch of tool calls
//     (Call, Handle), and the Offer of tools a face makes. A face that answers tool calls
//     imports this.
//   - [github.com/skillbox-dev/skillbox/agent/search]: a BM25 search over the catalog.
//   - [github.com/skillbox-dev/skillbox/agent/prompt]: the system prompt listing the skills, for
//     an agent loop that owns its prompt.
//   - [github.com/skillbox-dev/skillbox/agent/runmodule]: the [RUN_MODULE] text protocol, for
//     models without tool calling.
//
// Dependencies run one way: tooldef and search import only the runtime; toolset imports
// tooldef and search; prompt and runmodule import toolset.
package agent
