package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/internal/docbound"
)

var manifestFields = []string{"id", "name", "description", "version", "parameters", "result", "tags",
	"createdBy", "entrypoint", "runtime", "permissions", "limits"}

// ParseManifest decodes and checks a manifest. path names the file in messages, and its extension
// picks the syntax (.yaml/.yml is YAML, anything else JSON). The error, if any, is a *SkillError
// holding every problem found.
func ParseManifest(path string, data []byte) (*Manifest, error) {
	c := &Checker{Path: path}
	m := c.Manifest(path, data)
	if len(c.Problems) > 0 {
		id := ""
		if m != nil {
			id = m.ID
		}
		return nil, &SkillError{ID: id, Problems: c.Problems}
	}
	return m, nil
}

func (c *Checker) Manifest(path string, data []byte) *Manifest {
	ext := strings.ToLower(filepath.Ext(path))
	d, bounds, err := ParseDoc(data, ext == ".yaml" || ext == ".yml")
	var be *docbound.Error
	if errors.As(err, &be) {
		c.AddBounds([]*docbound.Error{be})
		return nil
	}
	if err != nil {
		if !c.Syntax(err) {
			c.Add("", "check the syntax near the position given", "cannot parse: %v", err)
		}
		return nil
	}
	c.AddBounds(bounds)
	c.Known(d, "", manifestFields...)
	m := &Manifest{
		ID:          c.Str(d, "", "id", true),
		Name:        c.Str(d, "", "name", true),
		Description: c.Str(d, "", "description", true),
		Version:     c.Str(d, "", "version", false),
		Tags:        c.StrList(d, "", "tags"),
		CreatedBy:   c.Str(d, "", "createdBy", false),
		Entrypoint:  c.Str(d, "", "entrypoint", false),
	}
	if m.ID != "" && !ValidID(m.ID) {
		c.Add("id", "use lower-case letters, digits and '-', starting with a letter or digit, at most 63",
			"%q is not a valid skill id", m.ID)
	}
	if m.Entrypoint == "" {
		m.Entrypoint = "execute"
	}
	if rt := c.Str(d, "", "runtime", false); rt != "" {
		m.Runtime = Language(rt)
		if _, ok := codeFiles[m.Runtime]; !ok {
			c.Add("runtime", "use wasm, python, javascript or typescript, or leave it out to run the directory's one execute file",
				"%q is not a runtime Skillbox knows", rt)
		}
	}
	m.Parameters = c.parameters(d["parameters"])
	m.schema = c.Schema
	if r := c.Object(d, "", "result"); r != nil {
		// Compiled by the MCP server and walked by the agent package: bounded like parameters.
		if b := docbound.Schema(r, "result"); b != nil {
			c.AddBounds([]*docbound.Error{b})
		} else {
			m.Result, _ = json.Marshal(r)
			// The MCP server validates results against it: refuse one whose validation could
			// take too long. One that does not compile is the MCP server's to report (it lists
			// the tool without it), as before.
			var ce *SchemaCostError
			if _, err := CompileSchema(m.Result); errors.As(err, &ce) {
				c.Add("result", ce.Hint(), "%v", err)
				m.Result = nil
			}
		}
	}
	m.Permissions = c.Permissions(c.Object(d, "", "permissions"))
	m.Limits = c.Limits(c.Object(d, "", "limits"), "limits")
	return m
}

func (c *Checker) Permissions(p Doc) Permissions { return c.PermissionsAt(p, "permissions") }

// PermissionsAt checks a permissions object found at field parent (messages name it).
func (c *Checker) PermissionsAt(p Doc, parent string) Permissions {
	var out Permissions
	if p == nil {
		return out
	}
	c.Known(p, parent, "network", "env", "secrets", "files")
	for i, h := range c.StrList(p, parent, "network") {
		if _, err := netguard.ParsePattern(h); err != nil {
			c.Add(fmt.Sprintf("%s.network[%d]", parent, i), "write a host such as api.example.com, api.example.com:8443 or *.example.com", "%v", err)
			continue
		}
		out.Network = append(out.Network, h)
	}
	for i, name := range c.StrList(p, parent, "env") {
		if !ValidEnvName(name) {
			c.Add(fmt.Sprintf("%s.env[%d]", parent, i), "use letters, digits and '_', not starting with a digit", "%q is not a valid variable name", name)
			continue
		}
		out.Env = append(out.Env, name)
	}
	for i, v := range c.List(p, parent, "secrets") {
		field := fmt.Sprintf("%s.secrets[%d]", parent, i)
		s, ok := v.(map[string]any)
		if !ok {
			c.Add(field, `{"name": "API_KEY", "hosts": ["api.example.com"], "header": "Authorization", "format": "Bearer {value}"}`, "must be an object")
			continue
		}
		c.Known(s, field, "name", "hosts", "header", "format")
		sr := SecretRequest{Name: c.Str(s, field, "name", true), Hosts: c.StrList(s, field, "hosts"),
			Header: c.Str(s, field, "header", true), Format: c.Str(s, field, "format", false)}
		if sr.Name != "" && !ValidEnvName(sr.Name) {
			c.Add(field+".name", "use letters, digits and '_'", "%q is not a valid secret name", sr.Name)
		}
		if len(sr.Hosts) == 0 {
			c.Add(field+".hosts", "list the hosts the secret may be sent to", "is required")
		}
		for j, h := range sr.Hosts {
			if _, err := netguard.ParsePattern(h); err != nil {
				c.Add(fmt.Sprintf("%s.hosts[%d]", field, j), "", "%v", err)
			}
		}
		if sr.Format != "" && !strings.Contains(sr.Format, "{value}") {
			c.Add(field+".format", `for example "Bearer {value}"`, "must contain {value}")
		}
		out.Secrets = append(out.Secrets, sr)
	}
	for i, v := range c.List(p, parent, "files") {
		field := fmt.Sprintf("%s.files[%d]", parent, i)
		f, ok := v.(map[string]any)
		if !ok {
			c.Add(field, `{"path": "/workspace/x", "access": "read-only"}`, "must be an object")
			continue
		}
		c.Known(f, field, "path", "access")
		fr := FileRequest{Path: c.Str(f, field, "path", true), Access: Access(c.Str(f, field, "access", false))}
		if fr.Access == "" {
			fr.Access = ReadOnly
		}
		if fr.Access != ReadOnly && fr.Access != ReadWrite {
			c.Add(field+".access", `use "read-only" or "read-write"`, "%q is not an access mode", fr.Access)
		}
		if fr.Path != "" {
			if err := CheckVirtualDir(fr.Path); err != nil {
				c.Add(field+".path", "use an absolute path such as /workspace/notes", "%v", err)
			}
		}
		out.Files = append(out.Files, fr)
	}
	return out
}

// CheckVirtualDir accepts clean absolute slash paths other than "/" and the reserved /skill.
func CheckVirtualDir(p string) error {
	if !strings.HasPrefix(p, "/") || p == "/" {
		return fmt.Errorf("%q must be an absolute path below /", p)
	}
	if strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return fmt.Errorf("%q contains a NUL byte or a backslash", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%q is not a clean path (empty, . or .. segment)", p)
		}
	}
	if p == "/skill" || strings.HasPrefix(p, "/skill/") {
		return fmt.Errorf("%q is reserved for the skill's own directory", p)
	}
	return nil
}

func ValidEnvName(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
