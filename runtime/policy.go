package runtime

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/internal/docbound"
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
	Secrets map[string]PolicySecret
	// Files lists the virtual directories a skill may be granted and where they live on the host.
	Files []PolicyMount
	// Limits are the ceilings of every limit; zero fields are [DefaultLimits].
	Limits Limits
	// Modules bound what a skill's module may declare (size, function size, function count).
	Modules ModuleLimits
	// Scripts grants a skill's programs (the files in its scripts/ directory) permissions by
	// skill id, beyond what the skill declares for them (see ScriptsFile); the ceilings above
	// still apply. In a policy file: scripts: {pdf: {files: [{path: /workspace, access: read-only}]}}.
	Scripts map[string]Permissions
	// AgentSkills is the ceiling of the skills agents write, and whether they may (see
	// AgentSkills). In a policy file: agentSkills: {enabled: true, network: [api.example.com]}.
	AgentSkills AgentSkills
	// Bundles says which skill bundles may be installed (see BundlePolicy). In a policy file:
	// bundles: {requireSigned: true, trustedKeys: [./publisher.pub, "base64 of 32 bytes"]}.
	Bundles BundlePolicy
	// Runs says what run history keeps (see RunsPolicy). In a policy file:
	// runs: {recordArguments: true}.
	Runs RunsPolicy
	// Versions says which versions of a skill run, for a runtime that keeps versions (see
	// VersionsPolicy). In a policy file: versions: {requirePublished: true}.
	Versions VersionsPolicy
	// Artifacts bounds every run's output directory, /output, or turns it off (see
	// ArtifactsPolicy). In a policy file: artifacts: {maxFiles: 16, maxFileBytes: 8388608}.
	Artifacts ArtifactsPolicy
	// RootCAs verifies the https servers skills fetch from; nil means the host's system roots.
	// For an embedder whose granted hosts use a private CA, and for tests. (Not in a policy file.)
	RootCAs *x509.CertPool
}

// PolicySecret is a secret's value and the host patterns it may be sent to.
type PolicySecret struct {
	Value string
	Hosts []string
}

// PolicyMount maps a virtual directory to a host directory. HostPath may contain "{skill}", which
// is replaced by the skill's id, to give each skill a directory of its own.
type PolicyMount struct {
	Path     string
	HostPath string
	Access   Access
}

var policyFields = []string{"network", "allowNetworks", "env", "secrets", "files", "limits", "modules", "scripts", "agentSkills", "bundles", "runs", "versions", "artifacts"}

// LoadPolicy reads a policy file (YAML or JSON). Relative host paths are relative to the file's
// directory. Every problem is reported at once in a *PolicyError.
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
func LoadPolicy(path string) (*Policy, error) {
	// Bounded like a manifest, and never a FIFO or a device: a policy is read at every reload.
	data, err := readRegular(path, maxManifestBytes)
	if err != nil {
		return nil, &PolicyError{Path: path, Problems: []string{err.Error()}}
	}
	return ParsePolicy(path, data, os.LookupEnv)
}

// ParsePolicy parses a policy; lookupEnv resolves fromHost values (os.LookupEnv in production).
func ParsePolicy(path string, data []byte, lookupEnv func(string) (string, bool)) (*Policy, error) {
	c := &checker{path: path}
	d, bounds, err := parseDoc(data, !strings.HasSuffix(strings.ToLower(path), ".json"))
	var be *docbound.Error
	switch {
	case errors.As(err, &be):
		c.addBounds([]*docbound.Error{be})
		return nil, c.policyError()
	case err != nil:
		return nil, &PolicyError{Path: path, Problems: []string{fmt.Sprintf("cannot parse: %v", err)}}
	}
	c.addBounds(bounds)
	c.known(d, "", policyFields...)
	p := &Policy{Env: map[string]string{}, Secrets: map[string]PolicySecret{}}
	for i, h := range c.strList(d, "", "network") {
		if _, err := netguard.ParsePattern(h); err != nil {
			c.add(fmt.Sprintf("network[%d]", i), "", "%v", err)
			continue
		}
		p.Network = append(p.Network, h)
	}
	for i, s := range c.strList(d, "", "allowNetworks") {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			if a, aerr := netip.ParseAddr(s); aerr == nil {
				pfx = netip.PrefixFrom(a, a.BitLen())
			} else {
				c.add(fmt.Sprintf("allowNetworks[%d]", i), "write a CIDR such as 127.0.0.1/32", "%v", err)
				continue
			}
		}
		p.AllowNetworks = append(p.AllowNetworks, pfx.Masked())
	}
	c.values(c.object(d, "", "env"), "env", p.Env, lookupEnv)
	c.secrets(c.object(d, "", "secrets"), p.Secrets, lookupEnv)
	base := filepath.Dir(path)
	for i, v := range c.list(d, "", "files") {
		field := fmt.Sprintf("files[%d]", i)
		f, ok := v.(map[string]any)
		if !ok {
			c.add(field, "{path: /workspace, hostPath: ./workspace, access: read-write}", "must be an object")
			continue
		}
		c.known(f, field, "path", "hostPath", "access")
		m := PolicyMount{Path: c.str(f, field, "path", true), HostPath: c.str(f, field, "hostPath", true),
			Access: Access(c.str(f, field, "access", false))}
		if m.Access == "" {
			m.Access = ReadOnly
		}
		if m.Access != ReadOnly && m.Access != ReadWrite {
			c.add(field+".access", `use "read-only" or "read-write"`, "%q is not an access mode", m.Access)
		}
		if m.Path != "" {
			if err := checkVirtualDir(m.Path); err != nil {
				c.add(field+".path", "", "%v", err)
			} else if m.Path == OutputMount || strings.HasPrefix(m.Path, OutputMount+"/") {
				c.add(field+".path", "mount it elsewhere; bound the output with artifacts: {...}", "%q is reserved for each run's own output directory", m.Path)
			}
		}
		if m.HostPath != "" && !filepath.IsAbs(m.HostPath) {
			m.HostPath = filepath.Join(base, m.HostPath)
		}
		p.Files = append(p.Files, m)
	}
	p.Limits = c.limits(c.object(d, "", "limits"), "limits")
	if sc := c.object(d, "", "scripts"); sc != nil {
		p.Scripts = map[string]Permissions{}
		for id := range sc {
			if !ValidID(id) {
				c.add("scripts."+id, "key it by a skill id: lower-case letters, digits and '-'", "%q is not a skill id", id)
				continue
			}
			p.Scripts[id] = c.permissionsAt(c.object(sc, "scripts", id), "scripts."+id)
		}
	}
	if a := c.object(d, "", "agentSkills"); a != nil {
		c.known(a, "agentSkills", "enabled", "network", "env", "secrets", "files", "limits")
		p.AgentSkills = AgentSkills{Enabled: c.boolean(a, "agentSkills", "enabled"),
			Network: c.strList(a, "agentSkills", "network"), Env: c.strList(a, "agentSkills", "env"),
			Secrets: c.strList(a, "agentSkills", "secrets"), Files: c.strList(a, "agentSkills", "files"),
			Limits: c.limits(c.object(a, "agentSkills", "limits"), "agentSkills.limits")}
		for i, h := range p.AgentSkills.Network {
			if _, err := netguard.ParsePattern(h); err != nil {
				c.add(fmt.Sprintf("agentSkills.network[%d]", i), "", "%v", err)
			}
		}
	}
	if bs := c.object(d, "", "bundles"); bs != nil {
		p.Bundles = c.bundles(bs, base)
	}
	if r := c.object(d, "", "runs"); r != nil {
		c.known(r, "runs", "recordArguments")
		p.Runs.RecordArguments = c.boolean(r, "runs", "recordArguments")
	}
	if v := c.object(d, "", "versions"); v != nil {
		c.known(v, "versions", "requirePublished")
		p.Versions.RequirePublished = c.boolean(v, "versions", "requirePublished")
	}
	if a := c.object(d, "", "artifacts"); a != nil {
		p.Artifacts = c.artifactsPolicy(a)
	}
	if mods := c.object(d, "", "modules"); mods != nil {
		c.known(mods, "modules", "maxModuleBytes", "maxFunctionBytes", "maxFunctions")
		p.Modules = ModuleLimits{
			MaxModuleBytes:   c.integer(mods, "modules", "maxModuleBytes", 1<<30),
			MaxFunctionBytes: c.integer(mods, "modules", "maxFunctionBytes", 1<<30),
			MaxFunctions:     c.integer(mods, "modules", "maxFunctions", 1_000_000),
		}
	}
	if len(c.problems) > 0 {
		return nil, c.policyError()
	}
	return p, nil
}

// policyError is the checker's problems as a *PolicyError.
func (c *checker) policyError() *PolicyError {
	msgs := make([]string, len(c.problems))
	for i, pr := range c.problems {
		pr.Path = ""
		msgs[i] = strings.TrimPrefix(pr.Error(), ": ")
	}
	return &PolicyError{Path: c.path, Problems: msgs}
}

// values reads env or secrets: name -> "literal" or {fromHost: VAR}. A fromHost variable that is
// unset is left out (and so never granted), rather than granted empty.
func (c *checker) values(obj doc, field string, into map[string]string, lookupEnv func(string) (string, bool)) {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		f := field + "." + name
		if !validEnvName(name) {
			c.add(f, "use letters, digits and '_'", "%q is not a valid name", name)
			continue
		}
		switch v := obj[name].(type) {
		case string:
			into[name] = v
		case map[string]any:
			c.known(v, f, "fromHost")
			from := c.str(v, f, "fromHost", true)
			if from == "" {
				continue
			}
			if val, ok := lookupEnv(from); ok {
				into[name] = val
			}
		default:
			c.add(f, `write a string, or {fromHost: NAME} to read the host's variable NAME`, "must be a string or an object, not %s", typeName(v))
		}
	}
}

// secrets reads name -> {value: V | fromHost: VAR, hosts: [...]}. hosts is required: a secret
// with no hosts of its own could be sent wherever a manifest asked.
func (c *checker) secrets(obj doc, into map[string]PolicySecret, lookupEnv func(string) (string, bool)) {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		f := "secrets." + name
		if !validEnvName(name) {
			c.add(f, "use letters, digits and '_'", "%q is not a valid name", name)
			continue
		}
		v, ok := obj[name].(map[string]any)
		if !ok {
			c.add(f, "write {fromHost: VAR, hosts: [api.example.com]}", "must be an object, not %s", typeName(obj[name]))
			continue
		}
		c.known(v, f, "value", "fromHost", "hosts")
		hosts := c.strList(v, f, "hosts")
		if len(hosts) == 0 {
			c.add(f+".hosts", "list the hosts this secret may be sent to, such as [api.example.com]", "is required")
		}
		for i, h := range hosts {
			if _, err := netguard.ParsePattern(h); err != nil {
				c.add(fmt.Sprintf("%s.hosts[%d]", f, i), "", "%v", err)
			}
		}
		value, hasValue := v["value"].(string)
		from := c.str(v, f, "fromHost", false)
		switch {
		case hasValue && from != "":
			c.add(f, "keep one of value and fromHost", "has both value and fromHost")
			continue
		case from != "":
			val, set := lookupEnv(from)
			if !set {
				continue // unset: not granted, rather than granted empty
			}
			value = val
		case !hasValue:
			c.add(f, "add fromHost: VAR (preferred) or value: ...", "has no value")
			continue
		}
		into[name] = PolicySecret{Value: value, Hosts: hosts}
	}
}

func (p *Policy) ceilings() Limits {
	return p.Limits.withDefaults(DefaultLimits)
}
