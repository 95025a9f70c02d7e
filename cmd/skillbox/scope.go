package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/server"
	"github.com/skillbox-dev/skillbox/spec"
)

// The scope a local command acts in: a tenant of serve --tenants (--tenant, with the tenants
// file for the commands that build the tenant's Runtime) and a user of it (--user). Without
// them, the default tenant, as every other local command. Whoever runs the command is the
// operator (see operator): an admin of every tenant, who sees every run of a tenant and acts in
// any user's view, as an admin's key with the Skillbox-User header does on the server.

// scopeHelp is what the help of each version command says of its scope flags.
const scopeHelp = `With --tenants FILE --tenant NAME, act on a tenant of serve --tenants FILE: its skills and
versions, its Runtime built as serve builds it (its skills directory, shared, policy and quota;
a missing skills directory is a warning, not made). With --user NAME, act in that user's view,
with or without --tenant: their own skills (visibility user), then the tenant's, as an admin's
key with the Skillbox-User header does. Without them, the default tenant.`

// maxListed bounds the names a message lists (the tenants of a file, the tenants with runs).
const maxListed = 20

// scopeFlags are the flags of the version commands that say where they act: --tenants and
// --tenant, which build the tenant's Runtime as serve --tenants does, and --user.
func scopeFlags(fs *pflag.FlagSet, e *env) {
	fs.StringVar(&e.tenantsFile, "tenants", "", "the tenants `FILE` serve --tenants reads: where --tenant's skills are, its policy and quota (see docs/tenants.md)")
	tenantFlag(fs, e, "act on tenant `NAME` of --tenants: its skills and versions, as serve --tenants serves them (default: the default tenant)")
	fs.Func("user", "act in user `NAME`'s view: their own skills (visibility user), then the tenant's, as an admin with the Skillbox-User header", func(v string) error {
		if v == "" {
			return fmt.Errorf("give the user's name, as their API key's user says it")
		}
		e.user = v
		return nil
	})
}

// tenantFlag is --tenant NAME, a tenant's name as a tenants file writes it (spec.ValidID).
func tenantFlag(fs *pflag.FlagSet, e *env, usage string) {
	fs.Func("tenant", usage, func(v string) error {
		if !spec.ValidID(v) {
			return fmt.Errorf("%q is not a tenant's name: a tenants file names them with lower-case letters, digits and hyphens", v)
		}
		e.tenant = v
		return nil
	})
}

// tenantSpec is the tenant --tenants and --tenant name, nil for the default tenant, read before
// anything is opened; for a command line that does not name one tenant, a usage error's exit
// code, the error printed with the fix.
func (e *env) tenantSpec() (*server.TenantSpec, int) {
	switch {
	case e.tenant != "" && e.tenantsFile == "":
		return nil, e.fail(exitUsage, "--tenant %s needs --tenants FILE, the tenants file of serve --tenants: it says where the tenant's skills are and which policy they run under. E.g. skillbox %s ... --tenants tenants.yaml --tenant %s", e.tenant, e.command, e.tenant)
	case e.tenantsFile == "":
		return nil, exitOK
	}
	specs, err := server.LoadTenants(e.tenantsFile)
	if err != nil {
		return nil, e.fail(exitUsage, "--tenants: %v", err)
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	if e.tenant == "" {
		return nil, e.fail(exitUsage, "--tenants %s: say which of its tenants to act on with --tenant NAME (%s), or drop --tenants for the default tenant", e.tenantsFile, listed(names))
	}
	for i := range specs {
		if specs[i].Name == e.tenant {
			return &specs[i], exitOK
		}
	}
	return nil, e.fail(exitUsage, "--tenant %s: %s has no tenant %q; its tenants: %s", e.tenant, e.tenantsFile, e.tenant, listed(names))
}

// scopedRuntime builds the Runtime a version command acts on: the tenant spec's, over its part
// of the store st (nil spec: the default tenant's, as every local command's), and with --user,
// that user's view of it. Close rt (it closes the user's too); act on view. A missing skills
// directory is a warning, never created.
func (e *env) scopedRuntime(ctx context.Context, spec *server.TenantSpec, st *localStore) (rt, view *runtime.Runtime, err error) {
	if spec == nil {
		rt, err = e.runtime(ctx)
	} else {
		e.warnMissingDir(spec.Skills, fmt.Sprintf(" of tenant %s (%s)", spec.Name, e.tenantsFile))
		if spec.Shared {
			for _, d := range e.skills {
				e.warnMissingDir(d, "")
			}
		}
		rt, err = e.tenantRuntime(ctx, *spec, st, nil, nil)
	}
	if err != nil || e.user == "" {
		return rt, rt, err
	}
	if !rt.HasUserSkills(e.user) {
		fmt.Fprintf(e.stderr, "skillbox: warning: user %q has no skills of their own in %s: you see %s's skills alone\n",
			clean(e.user), clean(e.tenantName()), clean(e.tenantName()))
	}
	view, err = rt.User(ctx, e.user)
	if err != nil {
		_ = rt.Close(context.Background())
		return nil, nil, err
	}
	return rt, view, nil
}

// tenantName is the tenant a command acts in, for a person: "tenant acme" or "the default tenant".
func (e *env) tenantName() string {
	if e.tenant == "" {
		return "the default tenant"
	}
	return "tenant " + e.tenant
}

// userName is the user a command acts as, for a person: ", as user alice", or "".
func (e *env) userName() string {
	if e.user == "" {
		return ""
	}
	return fmt.Sprintf(", as user %q", e.user)
}

// scopeArgs are the flags that name the scope a command acted in, for the commands a message
// tells the user to run next ("" in the default tenant as the operator).
func (e *env) scopeArgs() string {
	var b strings.Builder
	if e.tenantsFile != "" {
		b.WriteString(" --tenants " + shellQuote(e.tenantsFile))
	}
	if e.tenant != "" {
		b.WriteString(" --tenant " + e.tenant)
	}
	if e.user != "" {
		b.WriteString(" --user " + shellQuote(e.user))
	}
	return b.String()
}

// listed is names for a message, at most maxListed of them.
func listed(names []string) string {
	if len(names) > maxListed {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:maxListed], ", "), len(names)-maxListed)
	}
	return strings.Join(names, ", ")
}
