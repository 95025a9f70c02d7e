package mcpserver

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// Refresh syncs the tools, resources and prompts with the runtime's skills, if they changed since
// the last sync (Runtime.Generation): it is cheap when nothing did. The SDK then notifies the
// connected clients (list_changed), once for changes made close together. The Server calls it on
// every request and, while clients are connected, every PollInterval; call it yourself after a
// Reload to notify at once.
func (s *Server) Refresh() {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	// Generation is read before Skills: a scan that lands in between is synced now and again
	// next time, never missed.
	gen := s.rt.Generation()
	if s.synced && gen == s.gen {
		return
	}
	s.synced, s.gen = true, gen
	skills := s.rt.Skills()
	s.syncTools()
	s.syncResources(skills)
	s.syncPrompts(skills)
}

// registered is what one sync wants registered: a definition (for comparison) and how to add it.
type registered struct {
	def string
	add func()
}

// apply removes from have what want lacks, adds what is new or changed, and records want in have.
func apply(have map[string]string, want map[string]registered, remove func(...string)) {
	var gone []string
	for k := range have {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		remove(gone...)
		for _, k := range gone {
			delete(have, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		w := want[k]
		if have[k] != w.def {
			w.add()
			have[k] = w.def
		}
	}
}

func defJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (s *Server) syncTools() {
	want := map[string]registered{}
	if s.opts.Offer.Toolset() {
		for _, t := range tooldef.MCPToolset(toolset.Tools(s.toolRunner)) {
			openWorld := t.Annotations.OpenWorldHint
			tool := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: t.Annotations.ReadOnlyHint, OpenWorldHint: &openWorld}}
			want[t.Name] = registered{def: defJSON(tool), add: func() { s.mcp.AddTool(tool, s.callToolset(tool.Name)) }}
		}
	}
	if s.opts.Offer.SkillTools() {
		s.wantSkillTools(want)
	}
	apply(s.tools, want, s.mcp.RemoveTools)
}

// wantSkillTools adds a tool per callable executable skill to want. A skill whose tool MCP's
// rules, or the name rules of the vendors MCP clients hand tools on to, refuse is left out
// (tooldef.MCP) and logged, once per change of the skills; run_skill still runs it.
func (s *Server) wantSkillTools(want map[string]registered) {
	l := toolset.OfferSkills.List(s.toolRunner, tooldef.FormatMCP)
	for _, b := range l.LeftOut {
		s.logger.Warn("mcp: the skill's tool is left out of the list: "+b.Problem, "skill", b.Skill, "tool", b.Tool, "vendor", b.Vendor, "rule", b.Rule)
	}
	for _, t := range l.Tools.([]tooldef.MCPTool) {
		id, ok := tooldef.SkillID(t.Name)
		if !ok {
			continue
		}
		openWorld := t.Annotations.OpenWorldHint
		tool := &mcp.Tool{
			Name:        t.Name,
			Title:       t.Title,
			Description: t.Description,
			InputSchema: t.InputSchema,
			Annotations: &mcp.ToolAnnotations{
				Title:         t.Annotations.Title,
				ReadOnlyHint:  t.Annotations.ReadOnlyHint,
				OpenWorldHint: &openWorld,
			},
		}
		var out *resultSchema
		if len(t.OutputSchema) > 0 {
			var err error
			if out, err = compileResultSchema(t.OutputSchema); err != nil {
				// Listed without it: promising an output schema the server cannot check would
				// make clients that check it refuse every result.
				s.logger.Warn("mcp: the result schema does not compile; the tool is listed without an output schema", "skill", id, "err", err)
			} else {
				tool.OutputSchema = t.OutputSchema
			}
		}
		want[t.Name] = registered{def: defJSON(tool), add: func() { s.mcp.AddTool(tool, s.callTool(id, out)) }}
	}
}

func (s *Server) syncResources(skills []*runtime.Skill) {
	want := map[string]registered{}
	add := func(r *mcp.Resource) {
		want[r.URI] = registered{def: defJSON(r), add: func() { s.mcp.AddResource(r, s.readResource) }}
	}
	for _, sk := range skills {
		if sk.Instructions() == nil {
			continue // no SKILL.md, or one that does not parse
		}
		add(&mcp.Resource{
			URI:         skillURI(sk.ID(), instructionsFile),
			Name:        sk.ID() + "/" + instructionsFile,
			Title:       sk.Instructions().Name,
			Description: sk.Instructions().Description,
			MIMEType:    markdown,
		})
		paths, err := skillmd.ListResources(sk.Dir(), 0)
		if err != nil {
			s.logger.Warn("mcp: cannot list the skill's files", "skill", sk.ID(), "err", err)
			continue
		}
		for _, p := range paths {
			add(&mcp.Resource{URI: skillURI(sk.ID(), p), Name: sk.ID() + "/" + p, MIMEType: mimeType(p)})
		}
	}
	apply(s.resources, want, s.mcp.RemoveResources)
}

// promptArgumentDescription describes a prompt's arguments, with the skill's argument-hint.
func promptArgumentDescription(hint string) string {
	const d = "What to do with the skill; it replaces $ARGUMENTS (and, word by word, $0, $1, ...) in the instructions, or is appended to them"
	if hint == "" {
		return d
	}
	return d + ". Expected: " + hint
}

func (s *Server) syncPrompts(skills []*runtime.Skill) {
	want := map[string]registered{}
	for _, sk := range skills {
		if sk.Kind() != spec.Instructions || sk.Status() != catalog.StatusActive || sk.Instructions() == nil {
			continue
		}
		// A prompt is the user's to invoke: skills whose SKILL.md keeps them from models
		// (disable-model-invocation) are prompts too.
		p := &mcp.Prompt{
			Name:        sk.ID(),
			Title:       sk.Instructions().Name,
			Description: sk.Instructions().Description,
			Arguments:   []*mcp.PromptArgument{{Name: promptArgument, Description: promptArgumentDescription(sk.ArgumentHint())}},
		}
		id := sk.ID()
		want[p.Name] = registered{def: defJSON(p), add: func() { s.mcp.AddPrompt(p, s.getPrompt(id)) }}
	}
	apply(s.prompts, want, s.mcp.RemovePrompts)
}
