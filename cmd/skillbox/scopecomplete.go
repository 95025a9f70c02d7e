package main

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/skillbox-dev/skillbox/server"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
)

// The shell completion of the scope flags (scope.go): a tenants file, the tenants it names, the
// tenants with runs, and the skill ids of the scope the line names. A completion opens nothing
// it would have to create, and says nothing on stderr.

// scopeCompletions complete the values of the version commands' scope flags.
var scopeCompletions = map[string]flagCompletion{
	"tenants": completeTenantsFile,
	"tenant": func(_ context.Context, e *env, _ string) ([]string, cobra.ShellCompDirective) {
		if e.tenantsFile == "" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		specs, err := server.LoadTenants(e.tenantsFile)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, len(specs))
		for i, s := range specs {
			names[i] = s.Name
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	},
	// A user is whatever a key names, kept on disk by a hash of the name alone: none to offer.
	"user": func(context.Context, *env, string) ([]string, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	},
}

// completeTenantsFile completes a tenants file: a YAML file.
func completeTenantsFile(context.Context, *env, string) ([]string, cobra.ShellCompDirective) {
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// completeRunTenants completes runs --tenant: the tenants with runs in the store the line names,
// when it exists (a completion creates no database).
func completeRunTenants(ctx context.Context, e *env, _ string) ([]string, cobra.ShellCompDirective) {
	e.stderr, e.json = io.Discard, false
	if e.database == "" {
		dir := e.dataDir
		if dir == "" {
			var err error
			if dir, err = e.projectDataDir(); err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
		}
		if _, err := os.Stat(filepath.Join(dir, sqlite.FileName)); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
	h, code := e.openStore(ctx, false)
	if code != exitOK || h == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer h.Close()
	names, err := h.store.RunTenants(ctx, "", store.MaxLimit)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeScopedSkillIDs completes the skill id of a version command from the skills of the
// scope the line names (--tenants, --tenant, --user), the default tenant's without them.
func completeScopedSkillIDs(ctx context.Context, e *env, args []string, toComplete string) []string {
	if len(args) > 0 {
		return nil
	}
	e.stderr, e.json = io.Discard, false
	spec, code := e.tenantSpec()
	if code != exitOK {
		return nil
	}
	rt, view, err := e.scopedRuntime(ctx, spec, nil)
	if err != nil {
		return nil
	}
	defer rt.Close(context.Background())
	var ids []string
	for _, s := range view.Skills() {
		ids = append(ids, s.ID())
	}
	return ids
}
