package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/agent/tooldef"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/version"
)

// The names of the tools with which an agent writes skills (see [Author]).
const (
	ToolCreateSkill = "create_skill"
	ToolUpdateSkill = "update_skill"
	ToolDeleteSkill = "delete_skill"
)

// Author is a Runner that can install skills an agent writes: *runtime.Runtime. The runtime
// decides everything — whether agents may write skills at all (the policy's agentSkills), the
// package's validity, the ceiling of what such a skill may be granted — and these tools
// translate, and so does whether the caller may author (its role, Origin.Who).
type Author interface {
	Runner
	AgentSkillsEnabled() bool
	Install(ctx context.Context, id string, files map[string][]byte, opts runtime.InstallOptions) (*runtime.Skill, error)
	Remove(ctx context.Context, who access.Principal, id string) error
	// SkillVersion is the version an install recorded, when the runtime keeps versions
	// (version.ErrNoStore otherwise).
	SkillVersion(ctx context.Context, id, digest string) (version.Version, error)
}

var _ Author = (*runtime.Runtime)(nil)

// authorTools are the tools that write skills, offered when the runtime lets agents write them.
var authorTools = []builtin{
	{
		name: ToolCreateSkill,
		description: "Creates a new skill from source: a manifest and its files (execute.js, execute.ts or execute.py " +
			"defining execute(args, ctx), modules beside it, an optional SKILL.md). It is checked and installed at once, " +
			"then runs with run_skill or its own tool. A skill written by an agent gets at most what the operator allows " +
			"agents' skills (often nothing: no network, no env, no secrets); asking for more is refused with what it asked.",
		parameters: `{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The new skill's id: lower-case letters, digits and '-'"},` +
			`"manifest":{"type":"object","description":"skill.json: id, name, description, parameters (each {type, description, required?, default?}), and optional permissions and limits"},` +
			`"files":{"type":"object","additionalProperties":{"type":"string"},"description":"The skill's files by path, as text: {\"execute.ts\": \"export function execute(args, ctx) {...}\"}"}},` +
			`"required":["id","manifest","files"],"additionalProperties":false}`,
		do: doCreateSkill,
	},
	{
		name: ToolUpdateSkill,
		description: "Replaces a skill an agent wrote with a new version (the whole manifest and files, as for create_skill). " +
			"Runs in flight finish on the old version.",
		parameters: `{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The skill's id"},` +
			`"manifest":{"type":"object","description":"The new skill.json"},` +
			`"files":{"type":"object","additionalProperties":{"type":"string"},"description":"The new files by path, as text"}},` +
			`"required":["id","manifest","files"],"additionalProperties":false}`,
		do: doUpdateSkill,
	},
	{
		name:        ToolDeleteSkill,
		description: "Deletes a skill an agent wrote.",
		parameters: `{"type":"object","properties":{"id":{"type":"string","description":"The skill's id"}},` +
			`"required":["id"],"additionalProperties":false}`,
		do: doDeleteSkill,
	},
}

// authoring reports whether r offers the authoring tools: it can install skills and its policy
// lets agents write them.
func authoring(r Runner) bool {
	a, ok := base(r).(Author)
	return ok && a.AgentSkillsEnabled()
}

// WrittenSkill is the value of create_skill and update_skill: what was installed.
type WrittenSkill struct {
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	Digest  string          `json:"digest"`
	Grant   *policy.Grant   `json:"grant"`
	Summary runtime.Summary `json:"summary"`
	// Status and Diff are the recorded version's, when the runtime keeps versions: "pending"
	// with what it asks beyond what agents' skills may have, until a human approves it.
	Status version.Status `json:"status,omitempty"`
	Diff   []string       `json:"diff,omitempty"`
}

func doCreateSkill(ctx context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	return writeSkill(ctx, r, args, start, runtime.InstallOptions{})
}

func doUpdateSkill(ctx context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	return writeSkill(ctx, r, args, start, runtime.InstallOptions{Replace: true, MustExist: true})
}

// writeSkill installs the skill in args as written by an agent.
func writeSkill(ctx context.Context, r Runner, args []byte, start time.Time, opts runtime.InstallOptions) (*run.Result, string, error) {
	a, perr := parseToolArgs(args, "id", "manifest", "files")
	if perr != nil {
		return failed("", start, perr)
	}
	id, manifest := a.str("id", true), a.object("manifest")
	var files map[string]string
	if raw, ok := a.m["files"]; ok {
		if err := json.Unmarshal(raw, &files); err != nil {
			a.problems = append(a.problems, `argument "files": must be an object of file paths to their text, such as {"execute.ts": "..."}`)
		}
	} else {
		a.problems = append(a.problems, `argument "files": is required`)
	}
	if err := a.err(); err != nil {
		return failed(id, start, err)
	}
	return installWritten(ctx, r, start, id, manifest, files, opts)
}

// installWritten installs the skill id an agent wrote, manifest and files, as opts says (a new
// skill, or a new version of one it wrote).
func installWritten(ctx context.Context, r Runner, start time.Time, id string, manifest []byte, files map[string]string, opts runtime.InstallOptions) (*run.Result, string, error) {
	au, rerr := author(ctx, r, id)
	if rerr != nil {
		return failed(id, start, rerr)
	}
	pkg := make(map[string][]byte, len(files)+1)
	for name, text := range files {
		pkg[name] = []byte(text)
	}
	if _, ok := pkg["skill.json"]; ok {
		return failed(id, start, invalidArgs(`give the manifest as "manifest", not as files["skill.json"]`))
	}
	pkg["skill.json"] = manifest
	o := originOf(ctx)
	opts.Face, opts.Who = o.Face, agentFor(o.Who)
	s, err := au.Install(ctx, id, pkg, opts)
	if err != nil {
		return failed(id, start, authorError(id, err))
	}
	w := WrittenSkill{ID: s.ID(), Tool: tooldef.Name(s.ID()), Digest: s.Digest(), Grant: s.Grant(), Summary: s.Summary()}
	verb := "created"
	if opts.Replace {
		verb = "updated"
	}
	text := fmt.Sprintf("Skill %q %s: run it with run_skill {\"skill\": %q, \"args\": {...}}.", s.ID(), verb, s.ID())
	if v, err := au.SkillVersion(ctx, s.ID(), s.Digest()); err == nil {
		w.Status, w.Diff = v.Status, v.Diff
		if v.Status == version.Pending {
			text = fmt.Sprintf("Skill %q %s, but it asks for more than a skill written by an agent may have, so it does not run until a human admin approves it (no tool can):\n  - %s",
				s.ID(), verb, strings.Join(v.Diff, "\n  - "))
		}
	}
	return succeeded(s.ID(), start, w, text)
}

func doDeleteSkill(ctx context.Context, r Runner, args []byte, start time.Time) (*run.Result, string, error) {
	a, perr := parseToolArgs(args, "id")
	if perr != nil {
		return failed("", start, perr)
	}
	id := a.str("id", true)
	if err := a.err(); err != nil {
		return failed(id, start, err)
	}
	au, rerr := author(ctx, r, id)
	if rerr != nil {
		return failed(id, start, rerr)
	}
	if err := au.Remove(ctx, agentFor(originOf(ctx).Who), id); err != nil {
		return failed(id, start, authorError(id, err))
	}
	return succeeded(id, start, map[string]string{"deleted": id}, fmt.Sprintf("Skill %q deleted.", id))
}

// agentFor is who as these tools act for them: a model makes the call (access.Principal.Agent),
// so the runtime holds it to what an agent may write and never lets it do an admin's part.
func agentFor(who access.Principal) access.Principal {
	who.Agent = true
	return who
}

// author returns r as an Author, or why the call may not write. Whether the caller may is the
// runtime's to say (Install and Remove check the role of Origin.Who, as an agent's).
func author(_ context.Context, r Runner, id string) (Author, *run.Error) {
	a, ok := base(r).(Author)
	if !ok {
		return nil, &run.Error{Kind: run.KindPermissionDenied, Skill: id, Message: "this host does not install skills"}
	}
	return a, nil
}

// authorError maps what the runtime refused into a run.Error a model can act on.
func authorError(id string, err error) *run.Error {
	var re *run.Error
	var se *spec.SkillError
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, access.ErrForbidden):
		return &run.Error{Kind: run.KindPermissionDenied, Skill: id, Message: "this caller may not write skills: " + err.Error(), Err: err}
	case errors.Is(err, runtime.ErrAuthoringOff), errors.Is(err, runtime.ErrNotAgentSkill), errors.Is(err, runtime.ErrBeyondCeiling):
		return &run.Error{Kind: run.KindPermissionDenied, Skill: id, Message: err.Error(), Err: err}
	case errors.Is(err, runtime.ErrExists):
		return &run.Error{Kind: run.KindInvalidArgs, Skill: id, Message: fmt.Sprintf("skill %q exists: update_skill replaces a skill an agent wrote (skill_update, under Devai's names)", id), Err: err}
	case errors.As(err, &se):
		return &run.Error{Kind: run.KindInvalidArgs, Skill: id, Message: se.Error(), Err: err}
	}
	return &run.Error{Kind: run.KindInternal, Skill: id, Message: err.Error(), Err: err}
}

// WithoutAuthoring returns r without its authoring tools: a face lists tools over it for a caller
// that may not write skills, so that it is not offered tools it cannot call.
func WithoutAuthoring(r Runner) Runner { return readOnlyRunner{r} }

// MayAuthor reports whether who is offered the tools that write skills: whether an agent acting
// for who has the role installing needs (access.NeedInstall). Every face lists tools by it (HTTP's
// GET /v1/tools over WithoutAuthoring, MCP's tools/list with IsAuthoring); the runtime still
// decides each call.
func MayAuthor(who access.Principal) bool { return agentFor(who).Allows(access.NeedInstall) }

// IsAuthoring reports whether name is one of the tools that write skills (create_skill,
// update_skill, delete_skill, and Devai's skill_create, skill_update, skill_delete).
func IsAuthoring(name string) bool {
	if isDevaiAuthoring(name) {
		return true
	}
	for _, t := range authorTools {
		if t.name == name {
			return true
		}
	}
	return false
}

// readOnlyRunner hides its Runner's other methods (Install, ...) from [authoring].
type readOnlyRunner struct{ Runner }
