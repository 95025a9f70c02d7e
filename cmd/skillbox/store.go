package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/postgres"
	"github.com/skillbox-dev/skillbox/store/sqlite"
)

// databaseSchemes are the --database URL schemes skillbox opens.
var databaseSchemes = []string{"postgres", "postgresql"}

// storeFlags are the flags of the commands that read or write the store (the run history and
// the skill versions): where it is. recording adds --no-store, for the commands that run skills.
func storeFlags(fs *pflag.FlagSet, e *env, recording bool) {
	fs.StringVar(&e.dataDir, "data-dir", "", "keep the run history and skill versions in `DIR`/"+sqlite.FileName+" (SQLite; default: $"+dataDirEnv+" when set, else .skillbox/ beside the first --skills directory: the project's own)")
	fs.StringVar(&e.database, "database", "", "keep the run history and skill versions in the PostgreSQL database at `URL` (postgres://user:password@host:5432/db), e.g. to share them between replicas, instead of --data-dir")
	if recording {
		// A flag, not an empty --data-dir: the choice to leave no trace is spelled out, and an
		// unset variable in a script (--data-dir "$DIR") cannot make it by accident.
		fs.BoolVar(&e.noStore, "no-store", false, "open no store: record no run history and keep no skill versions (the runs are still logged with --verbose); for runs that must leave no trace, or a read-only disk")
		fs.StringVar(&e.spoolDir, "spool-dir", "", "keep the run records the store cannot take yet (it is down, slow or full) in `DIR`, replayed in order once it can, across restarts (default: spool/ in the data directory; with --database, spool-<hash of the URL>/ in it)")
	}
}

// retentionFlags are the flags of the commands that record runs: which finished runs the
// history keeps (store.Retention), read by the store's own readers, as a tenants file's
// retention is. Each tenant's runs are counted apart: the default tenant and every tenant of
// serve --tenants without a retention of its own keeps up to --keep-runs. The recorder applies
// them when the command starts, every minute while it serves, and once more as it ends.
func retentionFlags(fs *pflag.FlagSet, e *env) {
	fs.Func("keep-runs", "keep the newest `N` finished runs of each tenant in the history, counted apart (a tenant of serve --tenants with a retention of its own keeps that), or unlimited (default: 0, which is 100000)", func(v string) error {
		n, err := store.ParseMaxRuns(v)
		e.retention.MaxRuns = n
		return err
	})
	fs.Func("keep-runs-for", "keep finished runs for `DUR` after they started, such as 72h or 90d, or unlimited (default: 0, which is 30d; a tenant of serve --tenants with a retention of its own keeps that)", func(v string) error {
		d, err := store.ParseMaxAge(v)
		if errors.Is(err, store.ErrMaxAgeTooShort) {
			// Pruned before anyone could read it: that is --no-store, said plainly.
			return fmt.Errorf("%w; to keep no history, use --no-store", err)
		}
		e.retention.MaxAge = d
		return err
	})
}

// dataDirEnv names the variable that, set to an absolute path, is the default --data-dir: for a
// container or a service whose data lives apart from its skills.
const dataDirEnv = "SKILLBOX_DATA_DIR"

// projectDataDir is the default data directory: $SKILLBOX_DATA_DIR, else .skillbox/ beside the
// first skills directory (./.skillbox for ./skills). Each project keeps its own history and
// versions, so a project never runs a version another project recorded under the same id.
func (e *env) projectDataDir() (string, error) {
	if d := os.Getenv(dataDirEnv); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("$%s is %q, not an absolute path", dataDirEnv, d)
		}
		return d, nil
	}
	first, err := filepath.Abs(dirsOrDefault(e.skills)[0])
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(first), ".skillbox"), nil
}

// noteLegacyStore says, once (when the project's data directory is first made), where an older
// skillbox kept every project's store, and how to keep using it: it is not used in silence.
func (e *env) noteLegacyStore(dir string) {
	legacy, err := defaultDataDir()
	if err != nil || legacy == dir {
		return
	}
	if _, err := os.Stat(filepath.Join(legacy, sqlite.FileName)); err != nil {
		return
	}
	fmt.Fprintf(e.stderr, "skillbox: note: this project's run history and skill versions are kept in %s from now on, its own; "+
		"an older skillbox kept every project's in %s: pass --data-dir %s to go on using that one\n", clean(dir), clean(legacy), clean(legacy))
}

// defaultDataDir is the user's data directory for skillbox, where an older skillbox kept every
// project's store (see noteLegacyStore): $XDG_DATA_HOME/skillbox when that
// is set to an absolute path (on every OS, so a test or a user can move it with one variable),
// else the OS's conventional place for an application's own data (not its cache: a cache may be
// wiped, history may not).
func defaultDataDir() (string, error) {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "skillbox"), nil
	}
	if goruntime.GOOS == "windows" {
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "skillbox"), nil
		}
		return "", errors.New("%LocalAppData% is not set")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	switch goruntime.GOOS {
	case "darwin", "ios":
		return filepath.Join(home, "Library", "Application Support", "skillbox"), nil
	case "plan9":
		return filepath.Join(home, "lib", "skillbox"), nil
	}
	return filepath.Join(home, ".local", "share", "skillbox"), nil
}

// localStore is the store a command opened: the database, and for a command that runs skills
// the recorder that writes its runs there (also set as e.recorder, for the runtime). The
// runtime the command builds next keeps its skill versions there too (e.versions).
type localStore struct {
	store store.Store
	rec   *store.Recorder
	where string // the path or the URL, its password redacted
}

// Close stops the recorder, then closes the store. Call it after the runtime's Close, so the
// last runs are recorded. A nil localStore is a no-op.
func (h *localStore) Close() {
	if h == nil {
		return
	}
	if h.rec != nil {
		h.rec.Close()
		// Once more at the end: a command that runs one skill ends before the recorder's next
		// sweep, and its own run counts against --keep-runs too.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = h.rec.Prune(ctx, time.Now())
		cancel()
	}
	_ = h.store.Close()
}

// openStore opens the store the flags name, the one way every command does. The runtime e
// builds next keeps its skill versions there (Config.Versions), so what the CLI runs, installs
// and serves is recorded as versions and obeys their statuses; with record, its runs are
// recorded there too. It returns a nil localStore (and exitOK) for --no-store; otherwise a
// failure's exit code, the error printed.
func (e *env) openStore(ctx context.Context, record bool) (*localStore, int) {
	switch {
	case e.noStore && (e.dataDir != "" || e.database != "" || e.spoolDir != ""):
		return nil, e.fail(exitUsage, "--no-store records nothing: drop --data-dir, --database and --spool-dir, or --no-store")
	case e.noStore && e.retention != (store.Retention{}):
		return nil, e.fail(exitUsage, "--no-store records nothing: drop --keep-runs and --keep-runs-for, or --no-store")
	case e.noStore:
		return nil, exitOK
	case e.dataDir != "" && e.database != "" && e.clusterMode == "":
		// In a cluster, --data-dir is the node's own state beside the shared database.
		return nil, e.fail(exitUsage, "--data-dir and --database both say where the store is: give one")
	}
	h := &localStore{}
	var err error
	spool := e.spoolDir
	fix := "fix the URL or the server, or pass --no-store to run without a store"
	if e.database != "" {
		u, perr := url.Parse(e.database)
		if perr != nil || !slices.Contains(databaseSchemes, strings.ToLower(u.Scheme)) {
			return nil, e.fail(exitUsage, "--database %s: not a database URL skillbox opens; use %s://user:password@host:5432/db (accepted schemes: %s), or --data-dir DIR for SQLite",
				redactURL(e.database), databaseSchemes[0], strings.Join(databaseSchemes, ", "))
		}
		h.where = redactURL(e.database)
		if spool == "" && record {
			dir := e.dataDir
			if dir == "" {
				var derr error
				if dir, derr = e.projectDataDir(); derr != nil {
					return nil, e.fail(exitFailed, "cannot find the project's data directory for the spool of run records (%v): pass --spool-dir DIR", derr)
				}
			}
			sum := sha256.Sum256([]byte(h.where))
			spool = filepath.Join(dir, "spool-"+hex.EncodeToString(sum[:6]))
		}
		h.store, err = postgres.Open(ctx, e.database)
	} else {
		dir := e.dataDir
		if dir == "" {
			if dir, err = e.projectDataDir(); err != nil {
				return nil, e.fail(exitFailed, "cannot find the project's data directory for the store (%v): pass --data-dir DIR, or --no-store to run without a store", err)
			}
			if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
				e.noteLegacyStore(dir)
			}
		}
		h.where = filepath.Join(dir, sqlite.FileName)
		if spool == "" {
			spool = filepath.Join(dir, "spool")
		}
		fix = "make " + dir + " a directory you can write, pass --data-dir DIR, or --no-store to run without a store"
		h.store, err = sqlite.Open(ctx, h.where)
	}
	if err != nil {
		msg := err.Error()
		if !strings.Contains(msg, h.where) {
			msg = h.where + ": " + msg
		}
		if errors.Is(err, store.ErrSchemaTooNew) {
			fix = "run a newer skillbox, or point --data-dir or --database elsewhere"
		}
		return nil, e.fail(exitFailed, "cannot open the store (run history and skill versions): %s. Fix: %s", msg, fix)
	}
	e.versions = h.store
	if record {
		var logger *slog.Logger
		if e.verbose {
			logger = slog.New(slog.NewTextHandler(e.stderr, nil))
		} else {
			logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		}
		opts := store.RecorderOptions{Logger: logger.With("store", h.where), Retention: e.retention, TenantRetention: e.tenantRetention, Spool: spool}
		if e.clusterMode != "" {
			// A node of a cluster that dies has its runs ended interrupted within about
			// clusterLease plus clusterSweep, by any node's sweep.
			opts.Lease, opts.Sweep = clusterLease, clusterSweep
		}
		h.rec, err = store.NewRecorder(h.store, opts)
		if err != nil {
			_ = h.store.Close()
			return nil, e.fail(exitFailed, "cannot open the spool of run records: %v. Fix: make %s a directory you can write, or pass --spool-dir DIR", err, spool)
		}
		e.recorder = h.rec
	}
	return h, exitOK
}

// redactURL is a database URL fit for a message: without its password.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(a URL that does not parse)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
