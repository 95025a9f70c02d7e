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

// tenantRuntimes builds the tenants of serve --tenants: one Runtime each on the Shared e's own
// runtime uses, each with its own skills directory (created 0700 when missing: uploads go
// there), policy file (the server's when it names none), quota, and its own part of the store.
// The returned close closes them all; call it before the Shared's Close.
func (e *env) tenantRuntimes(ctx context.Context, specs []server.TenantSpec, st *localStore, logger *slog.Logger) (map[string]server.Tenant, func(), error) {
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
		dirs := []string{spec.Skills}
		if spec.Shared {
			dirs = append(dirs, dirsOrDefault(e.skills)...)
		}
		var t server.Tenant
		rt, err := e.runtimeFor(ctx, dirs, func(cfg *runtime.Config) {
			cfg.Tenant, cfg.Quota = spec.Name, spec.Quota
			if spec.Policy != "" {
				cfg.PolicyFile = spec.Policy
			}
			if cfg.Logger != nil {
				cfg.Logger = cfg.Logger.With("tenant", spec.Name)
			}
			cfg.OnReload = func(d runtime.Reloaded) { logReload(logger.With("tenant", spec.Name), d) }
			if st != nil {
				ts := st.store.Tenant(spec.Name)
				cfg.Versions, t.History = ts, ts
				if st.rec != nil {
					cfg.Artifacts = st.rec.Artifacts(spec.Name)
				}
			}
		})
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("tenant %s: %w", spec.Name, err)
		}
		made = append(made, rt)
		t.Runtime = rt
		out[spec.Name] = t
	}
	return out, closeAll, nil
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
