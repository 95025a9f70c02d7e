package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/server"
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
		policy := spec.Policy
		if policy == "" {
			policy = e.policy
		}
		cfg := runtime.Config{Shared: e.shared, Tenant: spec.Name, SkillDirs: dirs, PolicyFile: policy, Quota: spec.Quota,
			Recorder: e.recorder, TracerProvider: e.tracer,
			OnReload: func(d runtime.Reloaded) { logReload(logger.With("tenant", spec.Name), d) }}
		if e.verbose {
			cfg.Logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("tenant", spec.Name)
		}
		var t server.Tenant
		if st != nil {
			ts := st.store.Tenant(spec.Name)
			cfg.Versions, t.History = ts, ts
			if st.rec != nil {
				cfg.Artifacts = st.rec.Artifacts(spec.Name)
			}
		}
		rt, err := runtime.New(ctx, cfg)
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
