// Package policy is the operator's word on what any skill may get, and the grant it makes of a
// manifest's request: the network, environment, secrets, directories and limits a run may use,
// the ceilings of skills written by agents, the installs it trusts, and what run history and
// versions keep. Reading a policy file and computing a grant are decided here, once; the runtime
// enforces the grant, the faces show it. It is a leaf: it links no engine.
package policy

import (
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/internal/docbound"
	"github.com/skillbox-dev/skillbox/internal/safefile"
	"github.com/skillbox-dev/skillbox/spec"
)

// Policy is the operator's word on what any skill may get. The zero Policy is the safe default:
// no network, no special networks, no environment, no secrets, no files, and [DefaultLimits] as
// the ceilings. A run's grant is what its manifest asks for, intersected with the policy.
type Policy struct {
	// Network lists host patterns a skill may be granted ("*" grants what any manifest asks).
	Network []string
	// AllowNetworks lists special networks (loopback, private, ...) that granted hosts may resolve
	// to. Empty refuses them all, which is what protects the operator's own network from skills.
	AllowNetworks []netip.Prefix
	// Env gives the values of the variables a skill may be granted.
	Env map[string]string
	// Secrets gives the values of the secrets a skill may be granted, by name, and the hosts each
	// may be sent to: a skill's manifest can narrow them, never widen them.
	Secrets map[string]Secret
	// Files lists the virtual directories a skill may be granted and where they live on the host.
	Files []Mount
	// Limits are the ceilings of every limit; zero fields are [DefaultLimits].
	Limits spec.Limits
	// Modules bound what a skill's module may declare (size, function size, function count).
	Modules ModuleLimits
	// Scripts grants a skill's programs (the files in its scripts/ directory) permissions by skill
	// id, beyond what the skill declares for them (see ScriptsFile); the ceilings above still
	// apply. In a policy file: scripts: {pdf: {files: [{path: /workspace, access: read-only}]}}.
	Scripts map[string]spec.Permissions
	// AgentSkills is the ceiling of the skills agents write, and whether they may (see
	// AgentSkills). In a policy file: agentSkills: {enabled: true, network: [api.example.com]}.
	AgentSkills AgentSkills
	// Bundles says which skill bundles may be installed (see Bundles). In a policy file:
	// bundles: {requireSigned: true, trustedKeys: [./publisher.pub, "base64 of 32 bytes"]}.
	Bundles Bundles
	// Runs says what run history keeps (see Runs). In a policy file:
	// runs: {recordArguments: true, maxArgsBytes: 8388608}.
	Runs Runs
	// Versions says which versions of a skill run, for a runtime that keeps versions (see
	// Versions). In a policy file: versions: {requirePublished: true}.
	Versions Versions
	// Artifacts bounds every run's output directory, /output, or turns it off (see
	// Artifacts). In a policy file: artifacts: {maxFiles: 16, maxFileBytes: 8388608}.
	Artifacts Artifacts
	// Ask says what a person may grant a run that was not granted it, when the run's face can
	// put the question to one (see Ask). Off by default. In a policy file:
	// ask: {network: ["*.example.com"], timeoutMs: 120000}.
	Ask Ask
	// RootCAs verifies the https servers skills fetch from; nil means the host's system roots.
	// For an embedder whose granted hosts use a private CA, and for tests. (Not in a policy file.)
	RootCAs *x509.CertPool
}

func (p *Policy) Ceilings() spec.Limits {
	return p.Limits.WithDefaults(spec.DefaultLimits)
}

// Clone returns a deep copy of p; nil is the default policy.
func (p *Policy) Clone() *Policy {
	if p == nil {
		return &Policy{}
	}
	c := *p
	c.Network = slices.Clone(p.Network)
	c.AllowNetworks = slices.Clone(p.AllowNetworks)
	c.Env = maps.Clone(p.Env)
	c.Secrets = make(map[string]Secret, len(p.Secrets))
	for k, v := range p.Secrets {
		v.Hosts = slices.Clone(v.Hosts)
		c.Secrets[k] = v
	}
	c.Files = slices.Clone(p.Files)
	c.Scripts = maps.Clone(p.Scripts) // the Permissions values are not changed in place
	a := p.AgentSkills
	a.Network, a.Env, a.Secrets, a.Files = slices.Clone(a.Network), slices.Clone(a.Env), slices.Clone(a.Secrets), slices.Clone(a.Files)
	c.AgentSkills = a
	c.Bundles.TrustedKeys = slices.Clone(p.Bundles.TrustedKeys)
	c.Ask = p.Ask.clone()
	return &c
}

// Secret is a secret's value and the host patterns it may be sent to.
type Secret struct {
	Value string
	Hosts []string
}

// Mount maps a virtual directory to a host directory. HostPath may contain "{skill}", which
// is replaced by the skill's id, to give each skill a directory of its own.
type Mount struct {
	Path     string
	HostPath string
	Access   spec.Access
}

var policyFields = []string{"network", "allowNetworks", "env", "secrets", "files", "limits", "modules", "scripts", "agentSkills", "bundles", "runs", "versions", "artifacts", "ask"}

// Load reads a policy file (YAML or JSON). Relative host paths are relative to the file's
// directory. Every problem is reported at once in a *Error.
//
// The file's shape:
//
//	network: ["api.example.com", "*.wikipedia.org"]
//	allowNetworks: ["127.0.0.1/32"]        # only for local testing
//	env:
//	  LANG: en_US.UTF-8                    # a fixed value
//	  TZ: {fromHost: TZ}                   # read from the host's environment
//	secrets:
//	  OPENAI_API_KEY: {fromHost: OPENAI_API_KEY, hosts: [api.openai.com]}
//	files:
//	  - {path: /workspace, hostPath: ./workspace/{skill}, access: read-write}
//	limits: {timeoutMs: 60000, memoryMiB: 128}
//	modules: {maxModuleBytes: 33554432, maxFunctionBytes: 1048576, maxFunctions: 100000}
//	bundles: {requireSigned: true, trustedKeys: [./publisher.pub]}
//	artifacts: {maxFiles: 16, maxFileBytes: 8388608, maxTotalBytes: 33554432}
func Load(path string) (*Policy, error) {
	// Bounded like a manifest, and never a FIFO or a device: a policy is read at every reload.
	data, err := safefile.ReadFile(path, spec.MaxManifestBytes)
	if err != nil {
		return nil, &Error{Path: path, Problems: []string{err.Error()}}
	}
	return Parse(path, data, os.LookupEnv)
}

// Parse parses a policy; lookupEnv resolves fromHost values (os.LookupEnv in production).
func Parse(path string, data []byte, lookupEnv func(string) (string, bool)) (*Policy, error) {
	c := &spec.Checker{Path: path}
	d, bounds, err := spec.ParseDoc(data, !strings.HasSuffix(strings.ToLower(path), ".json"))
	var be *docbound.Error
	switch {
	case errors.As(err, &be):
		c.AddBounds([]*docbound.Error{be})
		return nil, policyError(c)
	case err != nil:
		return nil, &Error{Path: path, Problems: []string{fmt.Sprintf("cannot parse: %v", err)}}
	}
	c.AddBounds(bounds)
	c.Known(d, "", policyFields...)
	p := &Policy{Env: map[string]string{}, Secrets: map[string]Secret{}}
	for i, h := range c.StrList(d, "", "network") {
		if _, err := netguard.ParsePattern(h); err != nil {
			c.Add(fmt.Sprintf("network[%d]", i), "", "%v", err)
			continue
		}
		p.Network = append(p.Network, h)
	}
	for i, s := range c.StrList(d, "", "allowNetworks") {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			if a, aerr := netip.ParseAddr(s); aerr == nil {
				pfx = netip.PrefixFrom(a, a.BitLen())
			} else {
				c.Add(fmt.Sprintf("allowNetworks[%d]", i), "write a CIDR such as 127.0.0.1/32", "%v", err)
				continue
			}
		}
		p.AllowNetworks = append(p.AllowNetworks, pfx.Masked())
	}
	values(c, c.Object(d, "", "env"), "env", p.Env, lookupEnv)
	secrets(c, c.Object(d, "", "secrets"), p.Secrets, lookupEnv)
	base := filepath.Dir(path)
	p.Files = mounts(c, c.List(d, "", "files"), "files", base)
	p.Limits = c.Limits(c.Object(d, "", "limits"), "limits")
	if sc := c.Object(d, "", "scripts"); sc != nil {
		p.Scripts = map[string]spec.Permissions{}
		for _, id := range slices.Sorted(maps.Keys(sc)) { // the same order every time
			if !spec.ValidID(id) {
				c.Add("scripts."+id, "key it by a skill id: lower-case letters, digits and '-'", "%q is not a skill id", id)
				continue
			}
			p.Scripts[id] = c.PermissionsAt(c.Object(sc, "scripts", id), "scripts."+id)
		}
	}
	if a := c.Object(d, "", "agentSkills"); a != nil {
		c.Known(a, "agentSkills", "enabled", "network", "env", "secrets", "files", "limits")
		p.AgentSkills = AgentSkills{Enabled: c.Bool(a, "agentSkills", "enabled"),
			Network: c.StrList(a, "agentSkills", "network"), Env: c.StrList(a, "agentSkills", "env"),
			Secrets: c.StrList(a, "agentSkills", "secrets"), Files: c.StrList(a, "agentSkills", "files"),
			Limits: c.Limits(c.Object(a, "agentSkills", "limits"), "agentSkills.limits")}
		for i, h := range p.AgentSkills.Network {
			if _, err := netguard.ParsePattern(h); err != nil {
				c.Add(fmt.Sprintf("agentSkills.network[%d]", i), "", "%v", err)
			}
		}
	}
	if bs := c.Object(d, "", "bundles"); bs != nil {
		p.Bundles = bundles(c, bs, base)
	}
	if r := c.Object(d, "", "runs"); r != nil {
		c.Known(r, "runs", "recordArguments", "omitResults", "omitLogs", "maxRecordBytes", "maxArgsBytes")
		p.Runs.RecordArguments = c.Bool(r, "runs", "recordArguments")
		p.Runs.OmitResults = c.Bool(r, "runs", "omitResults")
		p.Runs.OmitLogs = c.Bool(r, "runs", "omitLogs")
		p.Runs.MaxRecordBytes = c.Int(r, "runs", "maxRecordBytes", MaxRecordBytesCeiling)
		p.Runs.MaxArgsBytes = c.Int(r, "runs", "maxArgsBytes", MaxArgsBytesCeiling)
	}
	if v := c.Object(d, "", "versions"); v != nil {
		c.Known(v, "versions", "requirePublished")
		p.Versions.RequirePublished = c.Bool(v, "versions", "requirePublished")
	}
	if a := c.Object(d, "", "artifacts"); a != nil {
		p.Artifacts = artifactsPolicy(c, a)
	}
	if a := c.Object(d, "", "ask"); a != nil {
		p.Ask = askPolicy(c, a, base, lookupEnv)
	}
	if mods := c.Object(d, "", "modules"); mods != nil {
		c.Known(mods, "modules", "maxModuleBytes", "maxFunctionBytes", "maxFunctions")
		p.Modules = ModuleLimits{
			MaxModuleBytes:   c.Int(mods, "modules", "maxModuleBytes", 1<<30),
			MaxFunctionBytes: c.Int(mods, "modules", "maxFunctionBytes", 1<<30),
			MaxFunctions:     c.Int(mods, "modules", "maxFunctions", 1_000_000),
		}
	}
	if len(c.Problems) > 0 {
		return nil, policyError(c)
	}
	return p, nil
}

// policyError is the checker's problems as a *Error.
func policyError(c *spec.Checker) *Error {
	msgs := make([]string, len(c.Problems))
	for i, pr := range c.Problems {
		pr.Path = ""
		msgs[i] = strings.TrimPrefix(pr.Error(), ": ")
	}
	return &Error{Path: c.Path, Problems: msgs}
}

// values reads env or secrets: name -> "literal" or {fromHost: VAR}. A fromHost variable that is
// unset is left out (and so never granted), rather than granted empty.
func values(c *spec.Checker, obj spec.Doc, field string, into map[string]string, lookupEnv func(string) (string, bool)) {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		f := field + "." + name
		if !spec.ValidEnvName(name) {
			c.Add(f, "use letters, digits and '_'", "%q is not a valid name", name)
			continue
		}
		switch v := obj[name].(type) {
		case string:
			into[name] = v
		case map[string]any:
			c.Known(v, f, "fromHost")
			from := c.Str(v, f, "fromHost", true)
			if from == "" {
				continue
			}
			if val, ok := lookupEnv(from); ok {
				into[name] = val
			}
		default:
			c.Add(f, `write a string, or {fromHost: NAME} to read the host's variable NAME`, "must be a string or an object, not %s", spec.TypeName(v))
		}
	}
}

// secrets reads name -> {value: V | fromHost: VAR, hosts: [...]}. hosts is required: a secret
// with no hosts of its own could be sent wherever a manifest asked.
func secrets(c *spec.Checker, obj spec.Doc, into map[string]Secret, lookupEnv func(string) (string, bool)) {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		f := "secrets." + name
		if !spec.ValidEnvName(name) {
			c.Add(f, "use letters, digits and '_'", "%q is not a valid name", name)
			continue
		}
		v, ok := obj[name].(map[string]any)
		if !ok {
			c.Add(f, "write {fromHost: VAR, hosts: [api.example.com]}", "must be an object, not %s", spec.TypeName(obj[name]))
			continue
		}
		c.Known(v, f, "value", "fromHost", "hosts")
		hosts := c.StrList(v, f, "hosts")
		if len(hosts) == 0 {
			c.Add(f+".hosts", "list the hosts this secret may be sent to, such as [api.example.com]", "is required")
		}
		for i, h := range hosts {
			if _, err := netguard.ParsePattern(h); err != nil {
				c.Add(fmt.Sprintf("%s.hosts[%d]", f, i), "", "%v", err)
			}
		}
		value, hasValue := v["value"].(string)
		from := c.Str(v, f, "fromHost", false)
		switch {
		case hasValue && from != "":
			c.Add(f, "keep one of value and fromHost", "has both value and fromHost")
			continue
		case from != "":
			val, set := lookupEnv(from)
			if !set {
				continue // unset: not granted, rather than granted empty
			}
			value = val
		case !hasValue:
			c.Add(f, "add fromHost: VAR (preferred) or value: ...", "has no value")
			continue
		}
		into[name] = Secret{Value: value, Hosts: hosts}
	}
}

// mounts reads a list of {path, hostPath, access} at field: the policy's files, and the
// directories its ask section lets a person grant. Relative host paths are relative to base.
func mounts(c *spec.Checker, list []any, field, base string) []Mount {
	var out []Mount
	for i, v := range list {
		field := fmt.Sprintf("%s[%d]", field, i)
		f, ok := v.(map[string]any)
		if !ok {
			c.Add(field, "{path: /workspace, hostPath: ./workspace, access: read-write}", "must be an object")
			continue
		}
		c.Known(f, field, "path", "hostPath", "access")
		m := Mount{Path: c.Str(f, field, "path", true), HostPath: c.Str(f, field, "hostPath", true),
			Access: spec.Access(c.Str(f, field, "access", false))}
		if m.Access == "" {
			m.Access = spec.ReadOnly
		}
		if m.Access != spec.ReadOnly && m.Access != spec.ReadWrite {
			c.Add(field+".access", `use "read-only" or "read-write"`, "%q is not an access mode", m.Access)
		}
		if m.Path != "" {
			if err := spec.CheckVirtualDir(m.Path); err != nil {
				c.Add(field+".path", "", "%v", err)
			} else if m.Path == artifact.OutputMount || strings.HasPrefix(m.Path, artifact.OutputMount+"/") {
				c.Add(field+".path", "mount it elsewhere; bound the output with artifacts: {...}", "%q is reserved for each run's own output directory", m.Path)
			}
		}
		if m.HostPath != "" && !filepath.IsAbs(m.HostPath) {
			m.HostPath = filepath.Join(base, m.HostPath)
		}
		out = append(out, m)
	}
	return out
}
