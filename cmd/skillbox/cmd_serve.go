package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/net/netutil"

	"github.com/skillbox-dev/skillbox/agent/toolset"
	"github.com/skillbox-dev/skillbox/cluster"
	"github.com/skillbox-dev/skillbox/console"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/server"
)

var cmdServe = &command{
	summary: "serve the skills over HTTP: list, run (JSON or SSE), tool manifests, management, metrics",
	usage:   "[--addr 127.0.0.1:8080] [--keys FILE] [--tenants FILE] [--insecure] [--watch] [--cors-origin ORIGIN]... [--no-console] [--tools all|skills|disclosure] [--max-connections N] [--body-timeout D] [--shutdown-timeout D]",
	flags: func(fs *pflag.FlagSet, e *env) {
		fs.StringVar(&e.addr, "addr", "127.0.0.1:8080", "listen `address`")
		fs.StringVar(&e.keys, "keys", "", "API keys `FILE` (YAML list of {name, key, role, tenant, user}; key may be env:VAR)")
		fs.StringVar(&e.tenantsFile, "tenants", "", "serve the tenants of `FILE` (YAML list of {name, skills, shared, policy, quota, retention}; see docs/tenants.md): each key of a tenant sees its skills and runs alone")
		fs.BoolVar(&e.insecure, "insecure", false, "allow a non-loopback address without API keys (requests must still be addressed to a loopback name, e.g. through a port forward)")
		fs.BoolVar(&e.watch, "watch", false, "reload skills when their files change")
		admissionFlags(fs, e)
		toolsFlag(fs, e)
		storeFlags(fs, e, true)
		retentionFlags(fs, e)
		connectionFlags(fs, e)
		clusterFlags(fs, e)
		fs.StringArrayVar(&e.cors, "cors-origin", nil, "let web pages from `ORIGIN` (scheme://host[:port], exact) call the API from a browser; repeatable. Off by default: pages from other origins may not run or change anything")
		fs.BoolVar(&e.noConsole, "no-console", false, "do not serve the operator console at /console/ (a browser app that calls this API with a key the operator types in; docs/console.md)")
	},
	completeFlags: map[string]flagCompletion{"tenants": completeTenantsFile},
	run: func(ctx context.Context, e *env, pos []string) int {
		if len(pos) != 0 {
			return e.fail(exitUsage, "serve takes no arguments")
		}
		var keys []server.APIKey
		if e.keys != "" {
			k, err := server.LoadKeys(e.keys)
			if err != nil {
				return e.fail(exitUsage, "--keys: %v", err)
			}
			keys = k
		}
		for _, o := range e.cors {
			if _, err := server.ParseOrigin(o); err != nil {
				return e.fail(exitUsage, "--cors-origin %q: %v", o, err)
			}
		}
		var tenants []server.TenantSpec
		if e.tenantsFile != "" {
			t, err := server.LoadTenants(e.tenantsFile)
			if err != nil {
				return e.fail(exitUsage, "--tenants: %v", err)
			}
			if len(keys) == 0 {
				return e.fail(exitUsage, "--tenants needs --keys: a request finds its tenant by its key's tenant")
			}
			tenants = t
			e.tenantRetention = tenantRetention(t)
		}
		if err := e.checkCluster(); err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		if len(keys) == 0 && !e.insecure && !loopback(e.addr) {
			return e.fail(exitUsage, "refusing to serve %s without API keys: anyone who can reach it could run and change skills. Use a loopback address, --keys FILE, or --insecure", e.addr)
		}
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		e.serving = true
		stopTracing, err := e.startTracing(ctx)
		if err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		defer stopTracing() // after Close: the last runs' spans are sent before the process exits
		logger := slog.New(slog.NewTextHandler(e.stderr, nil))
		e.onReload = func(d runtime.Reloaded) { logReload(logger, d) }
		h, code := e.openStore(ctx, true)
		if code != exitOK {
			return code
		}
		defer h.Close() // after the runtime's Close: its last runs are recorded
		var node *cluster.Node
		defer func() {
			if node != nil {
				node.Close() // after the runtimes' Close: their last runs' results are shared
			}
		}()
		rt, err := e.runtime(ctx)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		defer rt.Close(context.Background())
		limitGoHeap(rt)
		if e.maxConnections < 1 || e.bodyTimeout <= 0 || e.shutdownTimeout <= 0 {
			return e.fail(exitUsage, "--max-connections, --body-timeout and --shutdown-timeout must be positive")
		}
		if node, err = e.joinCluster(ctx, rt, logger); err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		opts := server.Options{Keys: keys, Logger: logger, CORSOrigins: e.cors, Offer: e.offer, ToolNames: e.toolNames, BodyTimeout: e.bodyTimeout,
			Console: e.console()}
		if node != nil {
			fmt.Fprintf(e.stderr, "skillbox: node %s of cluster %q\n", e.cluster.NodeID, e.cluster.Name)
			opts.Cluster = node
			if err := share(rt, node); err != nil {
				return e.fail(exitFailed, "%v", err)
			}
		}
		if h != nil {
			opts.History = h.store
		}
		if len(tenants) > 0 {
			ts, closeTenants, err := e.tenantRuntimes(ctx, tenants, h, logger, rt)
			if err != nil {
				return e.fail(exitFailed, "--tenants: %v", err)
			}
			defer closeTenants()
			opts.Tenants = ts
			for name, t := range ts {
				if node != nil {
					if err := share(t.Runtime, node); err != nil {
						return e.fail(exitFailed, "tenant %s: %v", name, err)
					}
				}
				if e.watch {
					go t.Runtime.Watch(ctx, 0)
				}
				go reloadOnHangup(ctx, t.Runtime, logger)
			}
		}
		srv, err := server.New(rt, opts)
		if err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		ln, err := net.Listen("tcp", e.addr)
		if err != nil {
			return e.fail(exitFailed, "%v", err)
		}
		ln = netutil.LimitListener(ln, e.maxConnections) // past it, clients wait in the kernel's backlog
		if e.watch {
			go rt.Watch(ctx, 0)
		}
		go reloadOnHangup(ctx, rt, logger)
		hs := &http.Server{
			Handler:           srv.Handler(),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			// No ReadTimeout/WriteTimeout: runs stream for as long as their own timeouts allow,
			// and every run is bounded by its grant.
		}
		if len(tenants) > 0 {
			fmt.Fprintf(e.stderr, "skillbox: tenants: %d (%s)\n", len(tenants), e.tenantsFile)
		}
		fmt.Fprintf(e.stderr, "skillbox: serving %d skills on http://%s (keys: %d)\n", len(rt.Skills()), ln.Addr(), len(keys))
		errc := make(chan error, 1)
		go func() { errc <- hs.Serve(ln) }()
		select {
		case err := <-errc:
			return e.fail(exitFailed, "%v", err)
		case <-ctx.Done():
		}
		fmt.Fprintf(e.stderr, "skillbox: shutting down; letting requests in flight finish (at most %s)\n", e.shutdownTimeout)
		sctx, cancel := context.WithTimeout(context.Background(), e.shutdownTimeout)
		defer cancel()
		switch err := hs.Shutdown(sctx); {
		case errors.Is(err, context.DeadlineExceeded):
			// What is still open had its time: cut it, and end its runs (the runtime's Close,
			// deferred, records them as canceled). A drain that ran its course is no failure.
			_ = hs.Close()
			fmt.Fprintf(e.stderr, "skillbox: %s passed; closed the connections still open\n", e.shutdownTimeout)
		case err != nil && !errors.Is(err, http.ErrServerClosed):
			return e.fail(exitFailed, "shutdown: %v", err)
		}
		return exitOK
	},
}

// console is the operator console serve offers at /console/, or nil with --no-console.
func (e *env) console() http.Handler {
	if e.noConsole {
		return nil
	}
	return console.Handler()
}

// connectionFlags bound what clients may hold of serve: its connections, the time a request's
// body may take, and the time SIGTERM gives requests in flight to finish.
func connectionFlags(fs *pflag.FlagSet, e *env) {
	fs.IntVar(&e.maxConnections, "max-connections", 1024, "the most client connections open at once; more wait to be accepted")
	fs.DurationVar(&e.bodyTimeout, "body-timeout", 2*time.Minute, "the longest a request body may take to arrive (after its first 5s it must also average 1 KiB/s); a slower one is answered 408 and its connection closed")
	fs.DurationVar(&e.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long SIGTERM lets requests in flight finish before it closes their connections and exits")
}

// admissionFlags are the flags of the long-running commands that bound what runs at once.
// toolsFlag is --tools of serve and mcp: which tools a client is offered ([toolset.Offer]).
func toolsFlag(fs *pflag.FlagSet, e *env) {
	e.offer = toolset.OfferAll
	fs.Func("tools", "which tools clients are offered: `all` (a tool per executable skill, then list_skills, load_skill, read_skill_resource and run_skill, through which clients that load only tools reach instruction skills; the default), skills (the skills' tools only) or disclosure (those four only, for a catalog too large to send a tool per skill)", func(v string) error {
		o, err := toolset.ParseOffer(v)
		e.offer = o
		return err
	})
	e.toolNames = toolset.NamingSkillbox
	fs.Func("tool-names", "the names of the tools that manage skills: `skillbox` (create_skill, update_skill, delete_skill; the default) or devai (skill_create, skill_update, skill_delete, skill_reload and skill_list, with Devai's arguments, for agent backends built on them)", func(v string) error {
		n, err := toolset.ParseNaming(v)
		e.toolNames = n
		return err
	})
}

func admissionFlags(fs *pflag.FlagSet, e *env) {
	fs.IntVar(&e.maxRuns, "max-runs", 0, "how many runs execute at once (default 16)")
	fs.IntVar(&e.maxQueue, "max-queue", 0, "how many runs may wait for room; more are refused busy (default 64)")
	fs.Var(&e.memoryBudget, "memory-budget", "what all runs, compilations and compiled modules may hold at once, such as 2GiB (default: half the machine's memory)")
	fs.Var(&e.compileMemory, "compile-memory", "the most one compilation may hold, such as 512MiB (the default); a module that needs more is refused")
	fs.DurationVar(&e.compileTimeout, "compile-timeout", 0, "the longest one compilation may take (default 60s)")
	fs.IntVar(&e.warmInstances, "warm-instances", 0, "keep `N` instances of each module that is slow to start (standard Go) made ahead of its runs, within the memory budget (default 0: none)")
}

// limitGoHeap sets the Go heap's soft limit to the runtime's memory budget plus headroom for the
// server itself, unless GOMEMLIMIT says otherwise: a run's transient copies (its output, its
// wasm stack) are garbage the moment it ends, and without the limit the collector would let
// them pile up to twice the live heap before it ran.
func limitGoHeap(rt *runtime.Runtime) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	debug.SetMemoryLimit(rt.Stats().Admission.MemoryBudget + goHeapHeadroom)
}

// goHeapHeadroom is what the server itself may hold beyond what runs are charged.
const goHeapHeadroom = 256 << 20

// reloadOnHangup rereads the policy file and the skills on SIGHUP, as daemons do, until ctx ends.
func reloadOnHangup(ctx context.Context, rt *runtime.Runtime, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := rt.Reload(ctx); err != nil {
				logger.Error("reload on SIGHUP failed; the previous policy and skills stay", "err", err)
				continue
			}
			logger.Info("reloaded the policy and skills on SIGHUP")
		}
	}
}

// logReload logs what a reload (--watch, SIGHUP, POST /v1/reload) changed: an operator editing a
// skill sees the edit picked up, or why the skill is now broken.
func logReload(logger *slog.Logger, d runtime.Reloaded) {
	if d.Empty() {
		logger.Info("skills reloaded: nothing changed", "count", d.Count)
	} else {
		logger.Info("skills reloaded", "count", d.Count, "added", strings.Join(d.Added, ","),
			"changed", strings.Join(d.Changed, ","), "removed", strings.Join(d.Removed, ","))
	}
	for _, b := range d.Broken {
		logger.Warn("skill is broken: listed with its error, not run", "skill", b.ID, "err", b.Reason)
	}
}

// loopback reports whether addr listens only on a loopback address.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
