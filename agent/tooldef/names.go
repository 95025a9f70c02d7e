package tooldef

import (
	"strings"

	"github.com/skillbox-dev/skillbox/spec"
)

// ToolPrefix starts the name of every skill's tool, so a backend can tell skill calls from its
// own tools.
const ToolPrefix = "skill_"

// Name returns the tool name of the skill id: "skill_" + id with '-' written '_'
// ("word-count" gives "skill_word_count"). Ids are lower-case letters, digits and '-', so the
// name matches ^[a-zA-Z0-9_-]+$, which OpenAI, Anthropic and MCP all accept. The '-' is
// replaced because some clients still treat tool names as identifiers. An id may have 63
// characters, which makes a name of 69: longer than OpenAI and Anthropic take
// ([MaxOpenAIToolName]), so the tool lists leave such a skill out ([VendorRules]).
func Name(id string) string {
	return ToolPrefix + strings.ReplaceAll(id, "-", "_")
}

// SkillID returns the skill id a tool name was made from, and false when tool is not the name of
// any skill: ids never contain '_', so the mapping is one to one.
func SkillID(tool string) (string, bool) {
	rest, ok := strings.CutPrefix(tool, ToolPrefix)
	if !ok {
		return "", false
	}
	id := strings.ReplaceAll(rest, "_", "-")
	if !spec.ValidID(id) || Name(id) != tool {
		return "", false
	}
	return id, true
}
