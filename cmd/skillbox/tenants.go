package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/server"
	"github.com/skillbox-dev/skillbox/store"
)

// tenantRuntimes builds the tenants of serve --tenants: one Runtime each (tenantRuntime) on the
// Shared e's own runtime uses, each tenant's skills directory created 0700 when missing (uploads
// go there), with its part of the store as its history. The returned close closes them all;
// call it before the Shared's Close, and before under's: a tenant that shares the server's
// skills under the server's policy lies over under, the server's own runtime (see tenantRuntime).
func (e *env) tenantRuntimes(ctx context.Context, specs []server.TenantSpec, st *localStore, logger *slog.Logger, under *runtime.Runtime) (map[string]server.Tenant, func(), error) {
	out := map[string]server.Tenant{}
	var made []*runtime.Runtime
	closeAll := func() {
		for _, rt := range made {
			_ = rt.Close(context.Background())
		}
	}
	for _, spec := range specs {
		if err := os.MkdirAll(spec.Skills, 0o700); err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("tenant %s: skills directory: %w", spec.Name, err)
		}
		rt, err := e.tenantRuntime(ctx, spec, st, logger, under)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		made = append(made, rt)
		t := server.Tenant{Runtime: rt}
		if st != nil {
			t.History = st.store.Tenant(spec.Name)
		}
		out[spec.Name] = t
	}
	return out, closeAll, nil
}

// tenantRuntime builds the Runtime of one tenant of a tenants file, the one way serve --tenants
// serves it and the version commands (--tenants FILE --tenant NAME) act on it, so both see the
// same skills under the same policy: its own skills directory, then with shared the server's
// --skills; its policy file (the global --policy when it names none); its quota; and its own
// part of the store st (its versions, and its artifacts when st records), none when st is nil.
//
// under, when set, is the server's own runtime: a tenant that shares the server's skills under
// the global policy then lies over it (runtime.Config.Under), so the shared directories are
// scanned once for every such tenant, not once each. A tenant with a policy of its own scans
// them itself, as its policy grants them.
//
// It creates nothing on disk: serve makes the tenant's directory first, for uploads, and a
// command that only reads and moves versions leaves a missing one missing. logger, when set,
// logs the tenant's reloads.
func (e *env) tenantRuntime(ctx context.Context, spec server.TenantSpec, st *localStore, logger *slog.Logger, under *runtime.Runtime) (*runtime.Runtime, error) {
	dirs := []string{spec.Skills}
	over := spec.Shared && spec.Policy == "" && under != nil && !e.claude // the server's runtime has exactly --skills
	if spec.Shared && !over {
		dirs = append(dirs, dirsOrDefault(e.skills)...)
	}
	rt, err := e.runtimeFor(ctx, dirs, func(cfg *runtime.Config) {
		cfg.Tenant, cfg.Quota = spec.Name, spec.Quota
		if spec.Policy != "" {
			cfg.PolicyFile = spec.Policy
		}
		if over {
			cfg.Under, cfg.PolicyFile = under, "" // the global --policy, under's
		}
		if cfg.Logger != nil {
			cfg.Logger = cfg.Logger.With("tenant", spec.Name)
		}
		if logger != nil {
			cfg.OnReload = func(d runtime.Reloaded) { logReload(logger.With("tenant", spec.Name), d) }
		}
		if st != nil {
			cfg.Versions = st.store.Tenant(spec.Name)
			cfg.Permits = st.store.Tenant(spec.Name)
			if st.rec != nil {
				cfg.Artifacts = st.rec.Artifacts(spec.Name)
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", spec.Name, err)
	}
	return rt, nil
}

// tenantRetention is the retention of each tenant of specs that has its own (a zero field is
// the server's --keep-runs or --keep-runs-for), for the recorder that prunes every tenant's
// history by its own.
func tenantRetention(specs []server.TenantSpec) map[string]store.Retention {
	out := map[string]store.Retention{}
	for _, spec := range specs {
		if spec.Retention != (store.Retention{}) {
			out[spec.Name] = spec.Retention
		}
	}
	return out
}
