package toolset

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Offer says which tools a face (the MCP server, GET /v1/tools) offers a model. Faces take it
// from their options and ask it; the choice of tools is made here, once, for all of them.
type Offer string

const (
	// OfferAll, the default, offers a tool per executable skill (skill_<id>) and the
	// progressive-disclosure [Tools], through which tool-only clients reach instruction skills.
	OfferAll Offer = "all"
	// OfferSkills offers the per-skill tools only.
	OfferSkills Offer = "skills"
	// OfferDisclosure offers the toolset ([Tools]) only: a catalog too large to send as one tool
	// per skill still fits a model's budget, and run_skill runs any executable skill.
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

// OpenAI returns the tools the offer has over r in OpenAI's shape: the skills' tools, then the
// toolset's.
func (o Offer) OpenAI(r Runner) []tooldef.OpenAITool {
	out := []tooldef.OpenAITool{}
	if o.SkillTools() {
		out = append(out, tooldef.OpenAI(skillToolCatalog(r))...)
	}
	if o.Toolset() {
		out = append(out, tooldef.OpenAIToolset(Tools(r))...)
	}
	return out
}

// Anthropic returns the tools the offer has over r in Anthropic's shape, in [Offer.OpenAI]'s
// order.
func (o Offer) Anthropic(r Runner) []tooldef.AnthropicTool {
	out := []tooldef.AnthropicTool{}
	if o.SkillTools() {
		out = append(out, tooldef.Anthropic(skillToolCatalog(r))...)
	}
	if o.Toolset() {
		out = append(out, tooldef.AnthropicToolset(Tools(r))...)
	}
	return out
}

// MCP returns the tools the offer has over r in the shape of MCP's tools/list, in
// [Offer.OpenAI]'s order.
func (o Offer) MCP(r Runner) []tooldef.MCPTool {
	out := []tooldef.MCPTool{}
	if o.SkillTools() {
		out = append(out, tooldef.MCP(skillToolCatalog(r))...)
	}
	if o.Toolset() {
		out = append(out, tooldef.MCPToolset(Tools(r))...)
	}
	return out
}

// SkillURIScheme is the scheme of the URIs of skills' files (skill://<id>/<path>), as the MCP
// server serves them.
const SkillURIScheme = "skill://"

// Origin says where a tool call comes from. The runs a call makes are recorded with its Face
// and Who, so metrics and history tell an MCP client's run_skill from an HTTP one; Remote
// says the client is not on this host (HTTP, MCP over HTTP), and load_skill then names a
// skill's base directory by its skill:// URI: a remote client is never handed a host path.
type Origin struct {
	Face run.Face
	// Who is the principal the face authenticated. The runtime decides from its role what it
	// may do: the tools that write skills (create_skill, update_skill, delete_skill) need the
	// author role. A call without an Origin is the embedding program's own, its operator's.
	Who    access.Principal
	Remote bool
	// OnEvent, when set, receives the events of the runs the call makes, with the skill's id
	// (see run.Request.OnEvent, whose rules it has): a face forwards log lines and
	// progress to its client as they happen.
	OnEvent func(skill string, e run.Event)
	// Asker, when set, puts the runs' permission requests to the person behind the face (see
	// run.Request.Asker).
	Asker run.Asker
}

type originKey struct{}

// localCaller is the principal of a call without an Origin: the embedding program's own, its
// operator's (access.Local), who may author when the policy lets agents write skills.
var localCaller = access.Local("local")

// WithOrigin returns ctx carrying o for [Call] and [Handle]. Without it a call is the embedding
// program's own: face [run.FaceAgent], a local client.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

func originOf(ctx context.Context) Origin {
	if o, ok := ctx.Value(originKey{}).(Origin); ok {
		if o.Face == "" {
			o.Face = run.FaceAgent
		}
		return o
	}
	return Origin{Face: run.FaceAgent, Who: localCaller}
}

// request is the run of skill id with args, as asked for from ctx's origin.
func request(ctx context.Context, id string, args []byte) run.Request {
	o := originOf(ctx)
	req := run.Request{Skill: id, Args: args, Face: o.Face, Who: o.Who, Asker: o.Asker}
	if o.OnEvent != nil {
		req.OnEvent = func(e run.Event) { o.OnEvent(id, e) }
	}
	return req
}

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
