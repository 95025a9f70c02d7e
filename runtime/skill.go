package runtime

import (
	"time"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/runtime/internal/registry"
	"github.com/skillbox-dev/skillbox/skillmd"
	"github.com/skillbox-dev/skillbox/spec"
)

// Skill is one loaded version of a skill package, seen read-only: a reload makes new Skills, and a
// run keeps the one it started with. Its accessors hand out copies, so no caller can change what
// another caller, or a run, sees.
//
// A Skill is loaded in two steps. The scan reads what describes it (manifest, SKILL.md
// frontmatter); its module and the digest of its files are read, hashed and checked once, when
// it is first run, checked, or asked for its module hash or digest, or by the runtime's
// background check after a scan. Until then an executable skill is StatusUnchecked; after, the
// accessors report what the check found, and never change again.
//
// A Skill is the runtime's loaded skill (runtime/internal/registry) with only these read-only
// methods: converting between the two costs nothing, and a Skill is the same value the runtime
// runs.
type Skill registry.Skill

// in is s as the runtime's machinery holds it.
func (s *Skill) in() *registry.Skill { return (*registry.Skill)(s) }

// view is s as callers see it.
func view(s *registry.Skill) *Skill { return (*Skill)(s) }

// views is l as callers see it.
func views(l []*registry.Skill) []*Skill {
	out := make([]*Skill, len(l))
	for i, s := range l {
		out[i] = view(s)
	}
	return out
}

// LoadSkill loads the skill package in dir under policy p, and checks it: its module is read,
// hashed and bounds-checked, its files digested. It never fails: a broken package comes back with
// Status error and Err saying everything that is wrong. ok is false when dir is not a skill
// package at all (no manifest, no SKILL.md), which a scan skips silently.
func LoadSkill(dir string, p *policy.Policy) (s *Skill, ok bool) {
	in, ok := registry.LoadChecked(dir, p)
	return view(in), ok
}

// ID is the skill's id: its directory's name. An instruction skill (a SKILL.md only) whose
// directory's name is not a valid id ("My_Skill", "pdf.tools") has the id derived from it by
// [skillmd.Slug] ("my-skill", "pdf-tools"), with a warning; its Name keeps the original.
func (s *Skill) ID() string { return s.in().ID() }

// Dir is the skill's directory on the host. Faces that answer remote clients show paths relative
// to it, never it.
func (s *Skill) Dir() string { return s.in().Dir() }

// Kind says whether the skill runs or only instructs.
func (s *Skill) Kind() spec.Kind { return s.in().Kind() }

// Language is what runs an executable skill: its module (LangWasm) or a script's interpreter,
// from the manifest's runtime or the one execute file its directory holds (LangWasm when it
// holds none); "" for an instruction skill.
func (s *Skill) Language() spec.Language { return s.in().Language() }

// Status is StatusActive, StatusError when the package is broken (see Err), or, for an executable
// skill whose module has not been checked yet, StatusUnchecked. It reads nothing from disk.
func (s *Skill) Status() catalog.Status { return s.in().Status() }

// Err is why a broken skill is broken: a *SkillError listing every problem; nil when active or
// unchecked. Once the skill is checked it includes what the check found.
func (s *Skill) Err() error { return s.in().Err() }

// Manifest returns a copy of the skill's manifest, or nil for an instruction skill or a manifest
// that did not parse.
func (s *Skill) Manifest() *spec.Manifest { return s.in().Manifest().Clone() }

// InstructionsPath is the skill's SKILL.md on the host, or "" when it has none.
func (s *Skill) InstructionsPath() string { return s.in().InstructionsPath() }

// Instructions returns a copy of the SKILL.md's frontmatter (its Body is empty: the body is read
// on demand), or nil when there is no SKILL.md or it does not parse (see InstructionsErr).
func (s *Skill) Instructions() *skillmd.Doc { return s.in().Instructions().Clone() }

// InstructionsErr is why the SKILL.md did not parse. An instruction skill with a broken SKILL.md
// is broken; an executable one still runs.
func (s *Skill) InstructionsErr() error { return s.in().InstructionsErr() }

// Digest is the version's identity: "sha256:<hex>" over the whole skill tree (manifest, module,
// instructions, resources; see bundle/tree.go), so a changed permission is a new version. A run
// pins it and reports it. It is "" only when the tree could not be read (the skill is then
// broken).
//
// # Notes
//
// An unchecked skill is checked by the first call (see Status): it reads the module and hashes
// the skill's files that changed since they were last hashed.
func (s *Skill) Digest() string { return s.in().Digest() }

// ModuleHash is the sha256 of the skill's module, hex ("" without one). Like Digest, it checks an
// unchecked skill first.
func (s *Skill) ModuleHash() string { return s.in().ModuleHash() }

// Grant returns a copy of what the skill's runs may do under the policy it was loaded with
// (nil when its manifest did not parse). It holds no secret value.
func (s *Skill) Grant() *policy.Grant { return s.in().Grant().Clone() }

// LoadedAt is when this version was loaded.
func (s *Skill) LoadedAt() time.Time { return s.in().LoadedAt() }

// Schema returns the compiled JSON Schema of the skill's arguments (nil unless executable).
func (s *Skill) Schema() *spec.Schema { return s.in().Schema() }

// Name is the manifest's name, else the SKILL.md's (its directory's name when it has none, as
// Claude Code names it), else the directory's name.
func (s *Skill) Name() string { return s.in().Name() }

// Warnings lists what the load repaired or found against the Agent Skills format in a skill that
// loads regardless (a SKILL.md without frontmatter, an unquoted ": " in it, a name that breaks
// the format's rule, a directory name that is not an id, ...), each with the rule it breaks and
// how to fix it, as a remote client may see them: files are named relative to the skills
// directory ("My_Skill/SKILL.md"), never by the host's layout. nil when there are none.
func (s *Skill) Warnings() []string { return s.in().Warnings() }

// ModelInvocable reports whether a model may be offered the skill: false when its SKILL.md sets
// Claude Code's "disable-model-invocation: true". Such a skill is for a user to invoke: the
// agent helpers leave it out of what they list to a model (list_skills, the system prompt, the
// tools) and refuse a model's load_skill or run of it, while a user's surface (an MCP prompt, the
// CLI, the HTTP API) still reaches it.
func (s *Skill) ModelInvocable() bool { return s.in().ModelInvocable() }

// ArgumentHint is the SKILL.md's "argument-hint" (what arguments the skill expects, such as
// "[issue] [branch]"), or "".
func (s *Skill) ArgumentHint() string { return s.in().ArgumentHint() }

// AllowedTools is the SKILL.md's "allowed-tools": the tools the skill's instructions expect an
// agent to be allowed ("Read", "Bash(python3:*)"), as written; nil when it sets none. Skillbox
// grants nothing by it: it is the agent's to honour.
func (s *Skill) AllowedTools() []string { return s.in().AllowedTools() }

// Description is the manifest's description, else the SKILL.md's.
func (s *Skill) Description() string { return s.in().Description() }

// Version is the manifest's version, or "" when there is none.
func (s *Skill) Version() string { return s.in().Version() }

// Tags are the manifest's tags (a copy).
func (s *Skill) Tags() []string { return s.in().Tags() }

// AgentWritten reports whether an agent wrote s (through create_skill or update_skill).
func (s *Skill) AgentWritten() bool { return s.in().AgentWritten() }

// Programs lists the programs of s Skillbox can run (ProgramLanguage), by skill-relative path, in
// the order of its files (at most 100; nil when it has none).
func (s *Skill) Programs() []string { return s.in().Programs() }

// ProgramGrant returns a copy of what s's programs may do under the policy it was loaded with;
// nil when its ScriptsFile does not parse (see ProgramsErr).
func (s *Skill) ProgramGrant() *policy.Grant { return s.in().ProgramGrant().Clone() }

// ProgramsErr is why s's programs cannot run: its ScriptsFile's problems. nil when they can.
func (s *Skill) ProgramsErr() error { return s.in().ProgramsErr() }

// ProgramProblems lists ProgramsErr as a remote client may see it, as Problems does Err: each
// file named relative to the skills directory, never the host's layout. nil when they can run.
func (s *Skill) ProgramProblems() []string { return s.in().RemoteProblems(s.ProgramsErr()) }
