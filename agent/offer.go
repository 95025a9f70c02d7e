package agent

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/skillbox-dev/skillbox/runtime"
)

// Offer says which tools a face (the MCP server, GET /v1/tools) offers a model. Faces take it
// from their options and ask it; the choice of tools is made here, once, for all of them.
type Offer string

const (
	// OfferAll, the default, offers a tool per executable skill (skill_<id>) and the
	// progressive-disclosure [Toolset], through which tool-only clients reach instruction skills.
	OfferAll Offer = "all"
	// OfferSkills offers the per-skill tools only.
	OfferSkills Offer = "skills"
	// OfferDisclosure offers the Toolset only: a catalog too large to send as one tool per skill
	// still fits a model's budget, and run_skill runs any executable skill.
	OfferDisclosure Offer = "disclosure"
)

// ParseOffer reads an Offer by name; "" is OfferAll.
func ParseOffer(s string) (Offer, error) {
	switch o := Offer(s); o {
	case "":
		return OfferAll, nil
	case OfferAll, OfferSkills, OfferDisclosure:
		return o, nil
	}
	return "", fmt.Errorf("tools %q: use %s, %s or %s", s, OfferAll, OfferSkills, OfferDisclosure)
}

// SkillTools reports whether the offer has a tool per executable skill.
func (o Offer) SkillTools() bool { return o != OfferDisclosure }

// Toolset reports whether the offer has the disclosure toolset.
func (o Offer) Toolset() bool { return o != OfferSkills }

// MCPToolset returns tools in the shape of [MCPTools], leaving out those that break one of the
// rules [MCPTools] keeps. Only run_skill can reach outside the host (through a skill's grant);
// the others read the catalog.
func MCPToolset(tools []Tool) []MCPTool {
	out := make([]MCPTool, 0, len(tools))
	for _, d := range toolsetFor(tools, FormatMCP) {
		out = append(out, MCPTool{Name: d.name, Title: d.name, Description: d.description, InputSchema: clone(d.schema),
			Annotations: MCPAnnotations{Title: d.name, ReadOnlyHint: d.name != ToolRunSkill, OpenWorldHint: d.name == ToolRunSkill}})
	}
	return out
}

// SkillURIScheme is the scheme of the URIs of skills' files (skill://<id>/<path>), as the MCP
// server serves them.
const SkillURIScheme = "skill://"

type remoteKey struct{}

// Remote returns ctx marked as a call from a client that is not on this host (HTTP, MCP over
// HTTP). load_skill then names a skill's base directory by its skill:// URI: a remote client
// must never be handed a path of the host.
func Remote(ctx context.Context) context.Context { return context.WithValue(ctx, remoteKey{}, true) }

func isRemote(ctx context.Context) bool { r, _ := ctx.Value(remoteKey{}).(bool); return r }

// BaseDir is the base directory rendered instructions name (skillmd.Render): for a remote client
// the skill's skill:// URI, for a local one (and the embedding program) its absolute directory,
// which the client's own tools can read.
func BaseDir(s *runtime.Skill, remote bool) string {
	if remote {
		return SkillURIScheme + s.ID() + "/"
	}
	if abs, err := filepath.Abs(s.Dir()); err == nil {
		return abs
	}
	return s.Dir()
}
