package toolset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillbox-dev/skillbox/agent/internal/skilltags"
	"github.com/skillbox-dev/skillbox/agent/search"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// MaxModelText bounds what load_skill and read_skill_resource return: it all goes into the
// model's context, where 256 KiB (some 60,000 tokens) is already most of a large window.
// skillmd's own default, 1 MiB, is for programs.
const MaxModelText = 256 << 10

// maxListedResources bounds the resources load_skill names.
const maxListedResources = 100

// SkillInfo is one skill as list_skills shows it: metadata only (progressive
// disclosure), so a thousand skills cost a listing, not a thousand SKILL.md bodies.
type SkillInfo struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Kind        spec.Kind `json:"kind"`
	Tags        []string  `json:"tags"`
	// Tool is the skill's tool name ([tooldef.Name]) for an executable skill, empty for an
	// instruction skill, which cannot be run.
	Tool string `json:"tool,omitempty"`
	// ArgumentHint is the SKILL.md's argument-hint: what load_skill's arguments should be, such
	// as "[issue] [branch]".
	ArgumentHint string `json:"argument_hint,omitempty"`
	// AllowedTools is the SKILL.md's allowed-tools: what its instructions expect the agent to be
	// allowed, for the agent to honour (runtime.Skill.AllowedTools).
	AllowedTools []string `json:"allowed_tools,omitempty"`
}

// SkillList is the value of list_skills.
type SkillList struct {
	Skills []SkillInfo `json:"skills"`
	// Total is how many usable skills there are in all: more than len(Skills) when a query or a
	// limit left some out.
	Total int `json:"total"`
}

// maxListLimit bounds list_skills' limit: a listing of more would not fit a model's budget
// anyway (2,000 skills are ~120k tokens), and a query finds the rest.
const maxListLimit = 1000

// listSkills is list_skills: every usable skill by id, or with a query those that match it
// best first (the search index's ranking), at most limit (0: all, or with a query
// search.DefaultLimit).
func listSkills(c catalog.Catalog[*runtime.Skill], query string, limit int) SkillList {
	all := ListSkills(c)
	out := SkillList{Skills: all, Total: len(all)}
	if strings.TrimSpace(query) != "" {
		byID := make(map[string]SkillInfo, len(all))
		for _, s := range all {
			byID[s.ID] = s
		}
		out.Skills = []SkillInfo{}
		for _, h := range search.Search(offered{c}, query, limit) {
			if s, ok := byID[h.ID]; ok { // a hit that is not usable is left out
				out.Skills = append(out.Skills, s)
			}
		}
		return out
	}
	if limit > 0 && len(all) > limit {
		out.Skills = all[:limit]
	}
	return out
}

// ListSkills returns the usable skills of c by id that a model may be offered: active ones,
// executable and instruction skills alike. Broken skills are left out (a model can do nothing
// with them; `skillbox list` shows them to the operator), and so are skills whose SKILL.md sets
// disable-model-invocation (runtime.Skill.ModelInvocable): they are for users to invoke. Nothing
// is read from disk: the runtime read every SKILL.md's frontmatter when it scanned.
func ListSkills(c catalog.Catalog[*runtime.Skill]) []SkillInfo {
	skills := c.Skills()
	if !slices.IsSortedFunc(skills, byID) {
		skills = slices.SortedFunc(slices.Values(skills), byID)
	}
	out := make([]SkillInfo, 0, len(skills))
	for _, s := range skills {
		if s == nil || !s.Status().Usable() || !s.ModelInvocable() {
			continue
		}
		info := SkillInfo{ID: s.ID(), Name: s.Name(), Description: s.Description(), Kind: s.Kind(), Tags: []string{}, ArgumentHint: s.ArgumentHint(), AllowedTools: s.AllowedTools()}
		info.Tags = append(info.Tags, skilltags.Of(s)...)
		if s.Kind() == spec.Executable {
			info.Tool = tooldef.Name(s.ID())
		}
		out = append(out, info)
	}
	return out
}

// offered is the part of a catalog a model may be offered: without the skills whose SKILL.md
// sets disable-model-invocation.
type offered struct {
	catalog.Catalog[*runtime.Skill]
}

func (o offered) Skills() []*runtime.Skill {
	all := o.Catalog.Skills()
	out := make([]*runtime.Skill, 0, len(all))
	for _, s := range all {
		if s != nil && s.ModelInvocable() {
			out = append(out, s)
		}
	}
	return out
}

// refuseModel is the error of a model's load or run of a skill that is for users to invoke.
func refuseModel(s *runtime.Skill) *run.Error {
	return &run.Error{Kind: run.KindPermissionDenied, Skill: s.ID(),
		Message: fmt.Sprintf("skill %q is for users to invoke: its SKILL.md sets disable-model-invocation, so a model may not load or run it; ask the user to invoke it", s.ID())}
}

func byID(a, b *runtime.Skill) int {
	switch {
	case a == nil || b == nil:
		return 0
	case a.ID() < b.ID():
		return -1
	case a.ID() > b.ID():
		return 1
	}
	return 0
}

func doListSkills(_ context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	a, perr := parseToolArgs(args, "query", "limit")
	if perr != nil {
		return failed("", start, perr)
	}
	query, limit := a.str("query", false), a.integer("limit", 0, 1, maxListLimit)
	if err := a.err(); err != nil {
		return failed("", start, err)
	}
	return succeeded("", start, listSkills(r, query, limit), "")
}

// LoadedSkill is the value of load_skill.
type LoadedSkill struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Kind        spec.Kind `json:"kind"`
	Tool        string    `json:"tool,omitempty"`
	// ArgumentHint is the SKILL.md's argument-hint: what arguments should be.
	ArgumentHint string `json:"argument_hint,omitempty"`
	// AllowedTools is the SKILL.md's allowed-tools (SkillInfo.AllowedTools).
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Content is what the model reads: the SKILL.md body rendered by [skillmd.Render] (the base
	// directory line, then the body with $ARGUMENTS replaced), or, for an executable skill
	// without one, its description and argument schema.
	Content string `json:"content"`
	// Parameters is the argument schema of an executable skill.
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Resources are the skill's other files, for read_skill_resource (at most 100).
	Resources []string `json:"resources"`
}

func doLoadSkill(ctx context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	a, perr := parseToolArgs(args, "name", "arguments")
	if perr != nil {
		return failed("", start, perr)
	}
	name, arguments := a.str("name", true), a.str("arguments", false)
	if err := a.err(); err != nil {
		return failed("", start, err)
	}
	s, id, err := invocable(r, name)
	if err != nil {
		return failed(id, start, err)
	}
	l := LoadedSkill{ID: s.ID(), Name: s.Name(), Description: s.Description(), Kind: s.Kind(), ArgumentHint: s.ArgumentHint(), AllowedTools: s.AllowedTools(), Resources: []string{}}
	if s.Kind() == spec.Executable {
		l.Tool = tooldef.Name(s.ID())
		if sc := s.Schema(); sc != nil {
			l.Parameters = bytes.Clone(sc.JSON())
		}
	}
	if res, err := skillmd.ListResources(s.Dir(), maxListedResources); err == nil {
		l.Resources = res
	}
	if s.InstructionsPath() != "" {
		content, ierr := instructions(s, arguments, originOf(ctx).Remote)
		if ierr == nil {
			l.Content = content
			return succeeded(s.ID(), start, l, withResources(content, l.Resources))
		}
		if s.Kind() != spec.Executable {
			return failed(s.ID(), start, ierr)
		}
		// An executable skill still runs with a broken SKILL.md: describe it as if it had none,
		// and say why.
		l.Content = describeProgram(s, l.Tool) + "\n\n(Its SKILL.md could not be read: " + ierr.Message + ")"
	} else {
		l.Content = describeProgram(s, l.Tool)
	}
	return succeeded(s.ID(), start, l, withResources(l.Content, l.Resources))
}

// instructions reads ([ReadInstructions]) and renders the SKILL.md of s, within MaxModelText.
func instructions(s *runtime.Skill, arguments string, remote bool) (string, *run.Error) {
	doc, err := ReadInstructions(s, MaxModelText)
	var re *skillmd.ResourceError
	switch {
	case errors.As(err, &re):
		return "", resourceError(s.ID(), err)
	case err != nil:
		return "", &run.Error{Kind: run.KindNotFound, Skill: s.ID(), Message: "its SKILL.md is invalid: " + err.Error(), Err: err}
	}
	return skillmd.Render(doc.Body, BaseDir(s, remote), arguments), nil
}

// describeProgram is what load_skill says of an executable skill that has no instructions.
func describeProgram(s *runtime.Skill, tool string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s)\n\n%s\n\n", s.Name(), s.ID(), s.Description())
	fmt.Fprintf(&b, "This skill is a program. Run it with the tool %s, or with run_skill {\"skill\": %q, \"args\": {...}}.", tool, s.ID())
	if sc := s.Schema(); sc != nil {
		fmt.Fprintf(&b, " Its arguments, as a JSON Schema:\n\n```json\n%s\n```", sc.JSON())
	}
	return b.String()
}

// withResources appends the names of the skill's other files to text, for the model.
func withResources(text string, resources []string) string {
	if len(resources) == 0 {
		return text
	}
	more := ""
	if len(resources) >= maxListedResources {
		more = fmt.Sprintf(" (the first %d)", maxListedResources)
	}
	text = strings.TrimRight(text, "\n") + "\n\n---\nFiles of this skill" + more + ", for read_skill_resource: " + strings.Join(resources, ", ")
	var programs []string
	for _, r := range resources {
		if _, ok := spec.ProgramLanguage(r); ok {
			programs = append(programs, r)
		}
	}
	if len(programs) > 0 {
		text += "\nPrograms it can run in the sandbox, with run_skill_script: " + strings.Join(programs, ", ")
	}
	return text
}

// Resource is the value of read_skill_resource.
type Resource struct {
	Skill    string `json:"skill"`
	Resource string `json:"resource"`
	Content  string `json:"content"`
}

func doReadResource(_ context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	a, perr := parseToolArgs(args, "skill", "resource")
	if perr != nil {
		return failed("", start, perr)
	}
	name, rel := a.str("skill", true), a.str("resource", true)
	if err := a.err(); err != nil {
		return failed("", start, err)
	}
	s, err := lookup(r, name)
	if err != nil {
		return failed("", start, err)
	}
	data, rerr := skillmd.ReadResource(s.Dir(), rel, MaxModelText)
	if rerr != nil {
		return failed(s.ID(), start, resourceError(s.ID(), rerr))
	}
	if !utf8.Valid(data) {
		return failed(s.ID(), start, &run.Error{Kind: run.KindInvalidArgs, Skill: s.ID(),
			Message: fmt.Sprintf("resource %q is not text (%d bytes of binary data); read the text files the instructions name", rel, len(data))})
	}
	return succeeded(s.ID(), start, Resource{Skill: s.ID(), Resource: rel, Content: string(data)}, string(data))
}

// resourceError maps a skillmd error to a run error a model can act on. Its message names the
// relative path only, never a host path (skillmd guarantees it).
func resourceError(skill string, err error) *run.Error {
	kind := run.KindInternal
	switch {
	case errors.Is(err, skillmd.ErrNotFound):
		kind = run.KindNotFound
	case errors.Is(err, skillmd.ErrDenied):
		kind = run.KindPermissionDenied
	case errors.Is(err, skillmd.ErrInvalid):
		kind = run.KindInvalidArgs
	case errors.Is(err, skillmd.ErrTooLarge):
		kind = run.KindOutputLimit
	}
	msg := err.Error()
	var re *skillmd.ResourceError
	if !errors.As(err, &re) {
		msg = "cannot be read"
	}
	return &run.Error{Kind: kind, Skill: skill, Message: msg, Err: err}
}

func doRunSkill(ctx context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	a, perr := parseToolArgs(args, "skill", "args")
	if perr != nil {
		return failed("", start, perr)
	}
	name, runArgs := a.str("skill", true), a.object("args")
	if err := a.err(); err != nil {
		return failed("", start, err)
	}
	s, id, err := invocable(r, name)
	if err != nil {
		return failed(id, start, err)
	}
	res, rerr := r.Run(ctx, request(ctx, s.ID(), runArgs))
	return res, "", rerr
}

// doRunSkillScript runs a program of a skill's scripts/ directory: the runtime resolves and
// refuses it (no such program, a shell script), as for every face.
func doRunSkillScript(ctx context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	a, perr := parseToolArgs(args, "skill", "script", "args", "stdin")
	if perr != nil {
		return failed("", start, perr)
	}
	name, script, argv := a.str("skill", true), a.str("script", true), a.strings("args")
	_, hasStdin := a.m["stdin"]
	stdin := a.str("stdin", false)
	if err := a.err(); err != nil {
		return failed("", start, err)
	}
	s, id, err := invocable(r, name)
	if err != nil {
		return failed(id, start, err)
	}
	req := request(ctx, s.ID(), nil)
	req.Script, req.Argv = script, argv
	if hasStdin {
		req.Stdin = []byte(stdin)
	}
	res, rerr := r.Run(ctx, req)
	return res, "", rerr
}

// invocable is lookup of the skill a model named, refused when the model may not invoke it
// (refuseModel); id is the skill's when one was found, for the failed call's Result.
func invocable(r Runner, name string) (s *runtime.Skill, id string, err *run.Error) {
	s, err = lookup(r, name)
	if err != nil {
		return nil, "", err
	}
	if !s.ModelInvocable() {
		return nil, s.ID(), refuseModel(s)
	}
	return s, s.ID(), nil
}

// lookup finds the skill a model named: by id, by tool name (skill_word_count), or by the name
// in its metadata when exactly one skill has it (load_skill's "name" argument is the name
// in the SKILL.md). Broken skills are found, and refused with their problems.
func lookup(r Runner, name string) (*runtime.Skill, *run.Error) {
	s, err := r.Skill(name)
	asked := err // the runtime's not_found for name: its nearest ids
	if err != nil {
		if id, ok := tooldef.SkillID(name); ok {
			s, err = r.Skill(id)
		}
	}
	if err != nil {
		var found *runtime.Skill
		for _, c := range r.Skills() {
			if c != nil && c.Name() == name {
				if found != nil {
					return nil, &run.Error{Kind: run.KindNotFound, Skill: name,
						Message: fmt.Sprintf("several skills are named %q (%s, %s, ...); give the id", name, found.ID(), c.ID())}
				}
				found = c
			}
		}
		if found == nil {
			// The runtime's words for a client (the nearest ids, never a directory of the host).
			msg := fmt.Sprintf("no skill %q", name)
			var nf *runtime.NotFoundError
			if errors.As(asked, &nf) {
				msg = nf.ClientMessage()
			}
			return nil, &run.Error{Kind: run.KindNotFound, Skill: name, Message: msg + "; list_skills gives the ids of the skills there are", Err: asked}
		}
		s = found
	}
	if !s.Status().Usable() {
		return nil, &run.Error{Kind: run.KindNotFound, Skill: s.ID(), Message: fmt.Sprintf("skill %q is broken and cannot be used (the operator sees why with: skillbox show %s)", s.ID(), s.ID()), Err: s.Err()}
	}
	return s, nil
}
