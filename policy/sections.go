package policy

import (
	"fmt"
	"strings"

	"github.com/skillbox-dev/skillbox/internal/wasmcheck"
	"github.com/skillbox-dev/skillbox/spec"
)

// Artifacts bounds the output directory of every run. The zero value is the defaults:
// the output mount on, each run at most 16 files of 8 MiB each and 32 MiB in all.
//
// The mount is on by default, unlike a directory of the host, because it exposes nothing of
// the host: it is empty when the run starts, private to the run, bounded, and removed after it;
// a skill still has to ask for it in its manifest, and a new version that starts asking is a
// new permission (see docs/versions.md).
type Artifacts struct {
	// Disabled refuses the output mount to every skill (a refusal line in each grant that asks).
	// In a policy file: artifacts: {enabled: false}.
	Disabled bool
	// MaxFiles bounds the files a run may leave (default 16).
	MaxFiles int64
	// MaxFileBytes bounds each file (default 8 MiB, at most 256 MiB: a store holds a file in
	// memory while it keeps or serves it).
	MaxFileBytes int64
	// MaxTotalBytes bounds all of a run's files together (default 32 MiB, at most 1 GiB).
	MaxTotalBytes int64
}

// The defaults and ceilings of Artifacts.
const (
	DefaultArtifactFiles      = 16
	DefaultArtifactFileBytes  = 8 << 20
	DefaultArtifactTotalBytes = 32 << 20
	maxArtifactFiles          = 4096
	maxArtifactFileBytes      = 256 << 20
	maxArtifactTotalBytes     = 1 << 30
)

// WithDefaults fills a's zero bounds.
func (a Artifacts) WithDefaults() Artifacts {
	if a.MaxFiles <= 0 {
		a.MaxFiles = DefaultArtifactFiles
	}
	if a.MaxFileBytes <= 0 {
		a.MaxFileBytes = DefaultArtifactFileBytes
	}
	if a.MaxTotalBytes <= 0 {
		a.MaxTotalBytes = DefaultArtifactTotalBytes
	}
	return a
}

// ArtifactLimits are the bounds of a granted output mount, as a grant shows them.
type ArtifactLimits struct {
	MaxFiles      int64 `json:"maxFiles"`
	MaxFileBytes  int64 `json:"maxFileBytes"`
	MaxTotalBytes int64 `json:"maxTotalBytes"`
}

// artifactsPolicy reads a policy file's artifacts section.
func artifactsPolicy(c *spec.Checker, obj spec.Doc) Artifacts {
	c.Known(obj, "artifacts", "enabled", "maxFiles", "maxFileBytes", "maxTotalBytes")
	a := Artifacts{
		MaxFiles:      c.Int(obj, "artifacts", "maxFiles", maxArtifactFiles),
		MaxFileBytes:  c.Int(obj, "artifacts", "maxFileBytes", maxArtifactFileBytes),
		MaxTotalBytes: c.Int(obj, "artifacts", "maxTotalBytes", maxArtifactTotalBytes),
	}
	if _, set := obj["enabled"]; set {
		a.Disabled = !c.Bool(obj, "artifacts", "enabled")
	}
	return a
}

// AgentSkills is the policy for skills written by an agent.
type AgentSkills struct {
	// Enabled lets agents create, update and delete skills. Off by default.
	Enabled bool
	// The ceiling: what a skill an agent wrote may be granted at most, within the policy's own
	// lists. Network lists host patterns (covered by the policy's network list too), Env and
	// Secrets names the policy gives values for, Files virtual directories of the policy's
	// mounts; Limits caps the limits (zero fields: the policy's ceilings). Empty, the default,
	// grants nothing but the skill's own directory.
	Network []string
	Env     []string
	Secrets []string
	Files   []string
	Limits  spec.Limits
}

// Error is a problem in the operator's policy file. Unlike a broken skill, a broken policy
// stops [New]: running with a policy other than the one the operator wrote would be unsafe.
type Error struct {
	Path     string
	Problems []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("policy %s: %s", e.Path, strings.Join(e.Problems, "; "))
}

// ModuleLimits bound what a skill's module may declare, so that no module can make compiling it,
// or instantiating it, cost the host more than these allow: the operator's policy sets them
// (policy file: modules), zero fields are the defaults. Every other count a module declares is
// bounded too, by fixed limits (internal/wasmcheck).
type ModuleLimits struct {
	// MaxModuleBytes bounds the module file (default 64 MiB).
	MaxModuleBytes int64 `json:"maxModuleBytes,omitempty"`
	// MaxFunctionBytes bounds one function's body (default 2 MiB): compiling costs memory in
	// proportion to the largest function.
	MaxFunctionBytes int64 `json:"maxFunctionBytes,omitempty"`
	// MaxFunctions bounds the functions, imported and defined (default 200,000).
	MaxFunctions int64 `json:"maxFunctions,omitempty"`
}

func (l ModuleLimits) WithDefaults() ModuleLimits {
	d := wasmcheck.DefaultLimits
	if l.MaxModuleBytes <= 0 {
		l.MaxModuleBytes = d.MaxModuleBytes
	}
	if l.MaxFunctionBytes <= 0 {
		l.MaxFunctionBytes = int64(d.MaxFunctionBytes)
	}
	if l.MaxFunctions <= 0 {
		l.MaxFunctions = int64(d.MaxFunctions)
	}
	return l
}

// Runs says what run history keeps.
type Runs struct {
	// RecordArguments keeps each run's arguments in its record. Off by default: arguments carry
	// whatever a user typed or an agent passed on (names, addresses, documents, now and then a
	// token), and a history that keeps them is one more copy to secure and to erase on request.
	// Without them, a record keeps ArgsSHA256, which tells runs with the same arguments apart
	// from others and lets an operator check a suspected input, without holding it.
	RecordArguments bool
	// OmitResults and OmitLogs keep no result value, or no log entries, in a run's stored
	// record. Both are kept by default: a history is read for them (what did the run answer,
	// what did it say); a skill whose results or logs carry what must not be kept turns them off.
	OmitResults, OmitLogs bool
	// MaxRecordBytes bounds the result and logs one stored record keeps, as JSON (default
	// 64 KiB, at most 16 MiB): past it, the logs go, then the result, and the record says it was
	// trimmed. The run's client got them whole.
	MaxRecordBytes int64
	// MaxArgsBytes bounds the arguments of one run, as JSON (default 4 MiB, at most 64 MiB): the
	// one bound every face reads a request within, so no face takes what the runtime refuses nor
	// refuses what it takes. In a policy file: runs: {maxArgsBytes: 8388608}.
	MaxArgsBytes int64
}

// The default and the ceiling of Runs.MaxArgsBytes.
const (
	DefaultMaxArgsBytes = 4 << 20
	MaxArgsBytesCeiling = 64 << 20 // what a policy or an operator may raise it to
)

// The default and the ceiling of Runs.MaxRecordBytes.
const (
	DefaultMaxRecordBytes = 64 << 10
	MaxRecordBytesCeiling = 16 << 20
)

// RecordBytes is the bound on what one stored record keeps of a result and its logs.
func (r Runs) RecordBytes() int64 {
	if r.MaxRecordBytes <= 0 {
		return DefaultMaxRecordBytes
	}
	return r.MaxRecordBytes
}

// ArgsBytes is the bound on one run's arguments: MaxArgsBytes, or the default.
func (r Runs) ArgsBytes() int64 {
	if r.MaxArgsBytes <= 0 {
		return DefaultMaxArgsBytes
	}
	return r.MaxArgsBytes
}

// Versions is the operator's word on versions; it applies only to a runtime with a
// version.Store.
type Versions struct {
	// RequirePublished runs only published versions: a skill without an active version does not
	// run by id, and a draft does not run even pinned by digest.
	RequirePublished bool
}
