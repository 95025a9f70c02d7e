package tooldef

import (
	"encoding/json"

	"github.com/skillbox-dev/skillbox/catalog"
)

// WellKnownVersion is the version of the tool manifest format written by [WellKnown], a date.
const WellKnownVersion = "2025-10-01"

// DefaultProvider names the provider of a manifest when the caller gives none.
const DefaultProvider = "skillbox"

// WellKnownManifest is the tool manifest served at /.well-known/skills.json, for agents
// that register tools from it:
//
//	{"version":"2025-10-01","provider":"skillbox","tools":[{"name":"skill_word_count",...}]}
type WellKnownManifest struct {
	Version  string          `json:"version"`
	Provider string          `json:"provider"`
	Tools    []WellKnownTool `json:"tools"`
}

// WellKnownTool is one tool of a [WellKnownManifest]. The format's "io" field (the MIME types
// of file inputs and outputs) is left out: manifests do not declare them.
type WellKnownTool struct {
	// Name is the tool name ([Name]), not "skill:<name>@<version>": a name with ':'
	// or '@' is not a valid function name for OpenAI or Anthropic, and agents register these
	// entries as functions.
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	ArgsSchema  json.RawMessage `json:"args_schema"`
	// SkillVersionID identifies the exact version that runs: "<id>@sha256:<digest>", the digest
	// of the skill's whole tree that its version is known by (runtime.Skill.Digest), so that
	// POST /v1/runs {"skill_version_id": ...} pins that version. It changes whenever any file of
	// the skill does, whatever the manifest's version says.
	SkillVersionID string `json:"skill_version_id"`
	// Visibility is "org": every caller of this server sees every skill (there is no per-user
	// ownership yet).
	Visibility string   `json:"visibility"`
	Tags       []string `json:"tags"`
}

// WellKnown returns the tool manifest of the skills of c that can be called. provider names the
// server ("" is [DefaultProvider]).
//
// # Notes
//
// Agents register these entries as OpenAI, Anthropic or MCP tools, so a skill whose tool name
// one of them refuses (longer than 64 characters) is left out, as [MCP] leaves it out
// ([VendorRules], [LeftOut]).
func WellKnown[S catalog.Skill](c catalog.Catalog[S], provider string) WellKnownManifest {
	if provider == "" {
		provider = DefaultProvider
	}
	out := WellKnownManifest{Version: WellKnownVersion, Provider: provider, Tools: []WellKnownTool{}}
	for _, t := range toolsFor(c, FormatWellKnown) {
		m := t.skill.Manifest()
		out.Tools = append(out.Tools, WellKnownTool{
			Name:           t.name,
			Title:          m.Name,
			Description:    t.description,
			ArgsSchema:     t.schema,
			SkillVersionID: versionID(t.skill.ID(), t.skill.Digest()),
			Visibility:     "org",
			Tags:           append([]string{}, m.Tags...),
		})
	}
	return out
}

// versionID is the skill_version_id of skill id at digest: "<id>@sha256:<hex>", the hex empty for
// a skill without a tree (a synthetic one: runtime.NewSkill), which no version is known by.
func versionID(id, digest string) string {
	if digest == "" {
		digest = "sha256:"
	}
	return id + "@" + digest
}
