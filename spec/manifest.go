// Package spec is what a skill package says of itself: its manifest (JSON or YAML), its
// parameters and their compiled JSON Schema, its language and the names of its files, and the
// errors that name the file, the field and the fix when it says something wrong. It also holds
// the one document checker the policy and program files are read with, so every file an author
// or an operator writes reports its problems the same way. It is a leaf: a catalog, a store or a
// tool definition reads it without linking the engine.
package spec

import (
	"encoding/json"
	"regexp"
	"slices"
)

// Manifest is a skill's skill.json (or skill.yaml): what it does, the arguments it takes, and the
// permissions and limits it asks for. It is plain data; [LoadManifest] fills and checks it.
type Manifest struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Version     string   `json:"version,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	CreatedBy   string   `json:"createdBy,omitempty"`
	// Entrypoint is the exported function to call; "execute" when empty, so existing Extism
	// plugins that export another name can run unchanged.
	Entrypoint string `json:"entrypoint,omitempty"`
	// Runtime says what runs the skill: "wasm" (execute.wasm), "python" (execute.py),
	// "javascript" (execute.js) or "typescript" (execute.ts). Empty means "the one code file the
	// directory holds"; it must be set when it holds more than one.
	Runtime Language `json:"runtime,omitempty"`
	// Parameters is the arguments' JSON Schema, normalised from either form the file may use
	// (a map of parameters, {"name": {"type": ...}}, or a JSON Schema object). Always an
	// object schema.
	Parameters json.RawMessage `json:"parameters"`
	// Result is an optional JSON Schema of the result value, for tool manifests.
	Result      json.RawMessage `json:"result,omitempty"`
	Permissions Permissions     `json:"permissions"`
	Limits      Limits          `json:"limits"`

	schema *Schema // Parameters compiled, by ParseManifest
}

// Schema is Parameters compiled, by ParseManifest; nil for a manifest built otherwise, or one
// whose parameters did not compile.
func (m *Manifest) Schema() *Schema { return m.schema }

// Permissions is what a skill asks for. None of it is granted unless the operator's policy allows
// it too: see [Policy.Grant].
type Permissions struct {
	// Network lists hosts the skill may fetch: "api.example.com", "api.example.com:8443",
	// "*.example.com".
	Network []string `json:"network,omitempty"`
	// Env lists environment variable names the skill may read. Their values come from the policy,
	// never from the host's environment unless the policy says so.
	Env []string `json:"env,omitempty"`
	// Secrets are injected by the host into requests to their hosts; the guest never sees them.
	Secrets []SecretRequest `json:"secrets,omitempty"`
	// Files are virtual directories the skill may read or write.
	Files []FileRequest `json:"files,omitempty"`
}

// SecretRequest asks the host to add a secret to outgoing requests to Hosts, as the header Header
// with the value formatted by Format ("Bearer {value}"; "{value}" when empty).
type SecretRequest struct {
	Name   string   `json:"name"`
	Hosts  []string `json:"hosts"`
	Header string   `json:"header"`
	Format string   `json:"format,omitempty"`
}

// Access is how a file mount may be used.
type Access string

const (
	ReadOnly  Access = "read-only"
	ReadWrite Access = "read-write"
)

// FileRequest asks for a virtual directory such as /workspace/images.
type FileRequest struct {
	Path   string `json:"path"`
	Access Access `json:"access"`
}

// Limits bound one run. A zero field means "the default" (see [DefaultLimits]), never unlimited.
type Limits struct {
	TimeoutMs      int64 `json:"timeoutMs,omitempty" yaml:"timeoutMs"`
	MemoryMiB      int64 `json:"memoryMiB,omitempty" yaml:"memoryMiB"`
	MaxOutputBytes int64 `json:"maxOutputBytes,omitempty" yaml:"maxOutputBytes"`
	MaxLogBytes    int64 `json:"maxLogBytes,omitempty" yaml:"maxLogBytes"`
	MaxFetches     int64 `json:"maxFetches,omitempty" yaml:"maxFetches"`
	MaxFetchBytes  int64 `json:"maxFetchBytes,omitempty" yaml:"maxFetchBytes"`
	MaxFileBytes   int64 `json:"maxFileBytes,omitempty" yaml:"maxFileBytes"`
	MaxWriteBytes  int64 `json:"maxWriteBytes,omitempty" yaml:"maxWriteBytes"`
}

// DefaultLimits are the limits of a skill that asks for none, and the ceilings of the default
// policy. They are small on purpose: a skill that needs more says so, and an operator agrees.
var DefaultLimits = Limits{
	TimeoutMs:      30_000,
	MemoryMiB:      64,
	MaxOutputBytes: 1 << 20,
	MaxLogBytes:    64 << 10,
	MaxFetches:     16,
	MaxFetchBytes:  4 << 20,
	MaxFileBytes:   8 << 20,
	MaxWriteBytes:  8 << 20,
}

// MaxMemoryMiB is the most a 32-bit wasm memory can hold (65536 pages of 64 KiB).
const MaxMemoryMiB = 4096

// limitField is one limit as it is spelled in files, and where its value is.
type LimitField struct {
	Name  string
	Value *int64
}

// Fields names each limit as it is spelled in files, for messages and for walking them.
func (l *Limits) Fields() []LimitField {
	return []LimitField{
		{"timeoutMs", &l.TimeoutMs}, {"memoryMiB", &l.MemoryMiB}, {"maxOutputBytes", &l.MaxOutputBytes},
		{"maxLogBytes", &l.MaxLogBytes}, {"maxFetches", &l.MaxFetches}, {"maxFetchBytes", &l.MaxFetchBytes},
		{"maxFileBytes", &l.MaxFileBytes}, {"maxWriteBytes", &l.MaxWriteBytes},
	}
}

// WithDefaults returns l with every zero field set from d.
func (l Limits) WithDefaults(d Limits) Limits {
	df := d.Fields()
	for i, f := range l.Fields() {
		if *f.Value == 0 {
			*f.Value = *df[i].Value
		}
	}
	return l
}

// Capped returns l with every field at most the one in ceiling.
func (l Limits) Capped(ceiling Limits) Limits {
	cf := ceiling.Fields()
	for i, f := range l.Fields() {
		if *f.Value > *cf[i].Value {
			*f.Value = *cf[i].Value
		}
	}
	return l
}

// idPattern is the form of a skill id: it is a directory name, a URL segment and part of a tool
// name (skill_<id>), so it is kept to what is safe in all three.
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// maxIDLen is the longest id idPattern allows.
const MaxIDLen = 63

// ValidID reports whether id is a well-formed skill id.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Clone returns a deep copy of m (nil for nil): the registry's manifests are shared by every
// caller and every run, so none is ever handed out.
func (m *Manifest) Clone() *Manifest {
	if m == nil {
		return nil
	}
	c := *m
	c.Tags = slices.Clone(m.Tags)
	c.Parameters = cloneRaw(m.Parameters)
	c.Result = cloneRaw(m.Result)
	c.Permissions = Permissions{
		Network: slices.Clone(m.Permissions.Network),
		Env:     slices.Clone(m.Permissions.Env),
		Files:   slices.Clone(m.Permissions.Files),
	}
	for _, s := range m.Permissions.Secrets {
		s.Hosts = slices.Clone(s.Hosts)
		c.Permissions.Secrets = append(c.Permissions.Secrets, s)
	}
	return &c
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return slices.Clone(r)
}
