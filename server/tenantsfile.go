package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/store"
)

// TenantSpec is one tenant of a tenants file: what a server needs to build its Runtime.
type TenantSpec struct {
	// Name is the tenant's name: API keys name it (APIKey.Tenant), and its runs and versions
	// are filed under it. Like a skill id: lower-case letters, digits and hyphens.
	Name string `yaml:"name"`
	// Skills is the tenant's own skills directory: its skills, and where its uploads go.
	Skills string `yaml:"skills"`
	// Shared, when true, also serves the server's own skill directories to the tenant, after
	// its own (a skill of its own with the same id wins); its uploads still go to Skills.
	Shared bool `yaml:"shared"`
	// Policy is the tenant's policy file, in place of the server's: its network, secrets,
	// env, mounts and limits. Empty: the server's policy.
	Policy string `yaml:"policy"`
	// Quota bounds the tenant's runs on top of the server's admission.
	Quota runtime.Quota `yaml:"quota"`
	// Retention bounds the tenant's run history in the store: its own finished runs, counted
	// and aged apart from every other tenant's, so a busy tenant cannot push its runs out. A
	// zero field is the server's (--keep-runs, --keep-runs-for). The file writes it as
	// retention: {maxRuns: 10000, maxAge: 90d}, each value read as the server's flag reads it
	// (store.ParseMaxRuns, store.ParseMaxAge); LoadTenants fills it.
	Retention store.Retention `yaml:"-"`
}

// tenantEntry is one tenant as its file writes it: the spec, and its retention as text, read
// by LoadTenants with the readers of the server's own flags, so the file and the command line
// take the same values (unlimited, 90d) and a bad one names its tenant.
type tenantEntry struct {
	TenantSpec `yaml:",inline"`
	Retention  tenantRetention `yaml:"retention"`
}

// tenantRetention is a tenant's retention as its file writes it; an empty field is the server's.
type tenantRetention struct {
	MaxRuns string `yaml:"maxRuns"`
	MaxAge  string `yaml:"maxAge"`
}

// LoadTenants reads a tenants file: a YAML list of TenantSpec. Relative paths are relative to
// the file's directory. Every problem is reported, each naming the tenant and the field.
//
//   - name: acme
//     skills: ./tenants/acme          # its own skills; uploads go here
//     shared: true                    # also the server's --skills
//     policy: ./tenants/acme.yaml     # its policy, secrets included
//     quota: {concurrentRuns: 4, runsPerMinute: 120}
//     retention: {maxRuns: 10000, maxAge: 90d}   # its own run history; else the server's
func LoadTenants(path string) ([]TenantSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a misspelt "qouta" must not silently mean "no quota"
	var entries []tenantEntry
	if err := dec.Decode(&entries); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w (want a list of {name, skills, shared, policy, quota, retention})", path, err)
	}
	specs := make([]TenantSpec, len(entries))
	base := filepath.Dir(path)
	var problems []error
	seen := map[string]bool{}
	for i := range entries {
		specs[i] = entries[i].TenantSpec
		t := &specs[i]
		where := fmt.Sprintf("%s: tenant %d (%s)", path, i+1, t.Name)
		problems = append(problems, readRetention(where, entries[i].Retention, &t.Retention)...)
		switch {
		case !spec.ValidID(t.Name):
			problems = append(problems, fmt.Errorf("%s: name %q: use lower-case letters, digits and hyphens, at most 63", where, t.Name))
		case seen[t.Name]:
			problems = append(problems, fmt.Errorf("%s: name %q is listed twice", where, t.Name))
		}
		seen[t.Name] = true
		if t.Skills == "" {
			problems = append(problems, fmt.Errorf("%s: skills: give the tenant's own skills directory", where))
		} else if !filepath.IsAbs(t.Skills) {
			t.Skills = filepath.Join(base, t.Skills)
		}
		if t.Policy != "" && !filepath.IsAbs(t.Policy) {
			t.Policy = filepath.Join(base, t.Policy)
		}
		if t.Quota.ConcurrentRuns < 0 || t.Quota.RunsPerMinute < 0 {
			problems = append(problems, fmt.Errorf("%s: quota: concurrentRuns and runsPerMinute are 0 (none) or more", where))
		}
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%s: no tenants (want a list of {name, skills, shared, policy, quota, retention})", path)
	}
	return specs, nil
}

// readRetention reads a tenant's retention text into keep, and says what is wrong with it,
// naming the tenant (where) and the field.
func readRetention(where string, text tenantRetention, keep *store.Retention) []error {
	var problems []error
	if text.MaxRuns != "" {
		n, err := store.ParseMaxRuns(text.MaxRuns)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: retention: maxRuns %q: %w", where, text.MaxRuns, err))
		}
		keep.MaxRuns = n
	}
	if text.MaxAge != "" {
		d, err := store.ParseMaxAge(text.MaxAge)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: retention: maxAge %q: %w", where, text.MaxAge, err))
		}
		keep.MaxAge = d
	}
	return problems
}
