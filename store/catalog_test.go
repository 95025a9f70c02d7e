package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/version"
)

// unreachable is a store that fails every call while down is set, and counts the calls.
type unreachable struct {
	store.Store
	down  atomic.Bool
	calls atomic.Int64
}

var errUnreachable = errors.New("connection refused")

func (u *unreachable) fail() error {
	u.calls.Add(1)
	if u.down.Load() {
		return errUnreachable
	}
	return nil
}

func (u *unreachable) Versions(ctx context.Context, skill string) ([]version.Version, error) {
	if err := u.fail(); err != nil {
		return nil, err
	}
	return u.Store.Versions(ctx, skill)
}

func (u *unreachable) Version(ctx context.Context, skill, digest string) (version.Version, error) {
	if err := u.fail(); err != nil {
		return version.Version{}, err
	}
	return u.Store.Version(ctx, skill, digest)
}

func (u *unreachable) VersionFiles(ctx context.Context, skill, digest string) (map[string][]byte, error) {
	if err := u.fail(); err != nil {
		return nil, err
	}
	return u.Store.VersionFiles(ctx, skill, digest)
}

func (u *unreachable) AddVersion(ctx context.Context, v version.Version, files map[string][]byte) (version.Version, bool, error) {
	if err := u.fail(); err != nil {
		return version.Version{}, false, err
	}
	return u.Store.AddVersion(ctx, v, files)
}

func (u *unreachable) SetVersionStatus(ctx context.Context, skill, digest string, t version.Transition, by, note string, at time.Time) (version.Version, error) {
	if err := u.fail(); err != nil {
		return version.Version{}, err
	}
	return u.Store.SetVersionStatus(ctx, skill, digest, t, by, note, at)
}

func (u *unreachable) Changes(ctx context.Context, since int64, limit int) ([]version.Version, int64, error) {
	if u.down.Load() { // the catalog's own reads are not counted: they are off the run's path
		return nil, since, errUnreachable
	}
	return u.Store.(version.Feed).Changes(ctx, since, limit)
}

func (u *unreachable) Events(ctx context.Context, skill, digest string, limit int) ([]version.Event, error) {
	return u.Store.(version.Feed).Events(ctx, skill, digest, limit)
}

func catalogRuntime(t *testing.T, s version.Store, skills string) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(t.Context(), runtime.Config{SkillDirs: []string{skills}, NoBackgroundCheck: true, Versions: s,
		Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testcache.Dir()})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

func hello(t *testing.T, rt *runtime.Runtime) (*run.Result, error) {
	return rt.Run(t.Context(), run.Request{Skill: "hello", Args: json.RawMessage(`{"name":"x"}`), Who: access.Local("test")})
}

// Once a skill's version is known, a run never reads the version store: with the store
// unreachable, runs of the published version and of a pinned older one succeed, and make no
// call to it.
func TestRunsNeverReadTheVersionStore(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	u := &unreachable{Store: s}
	rt := catalogRuntime(t, u, "../skills")
	res, err := hello(t, rt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ChangeVersion(t.Context(), access.Principal{Key: "rel", Role: access.RolePublisher}, "hello", res.Digest, "publish", ""); err != nil {
		t.Fatal(err)
	}
	u.down.Store(true)
	before := u.calls.Load()
	for range 5 {
		got, err := hello(t, rt)
		if err != nil || !got.Success || got.Digest != res.Digest {
			t.Fatalf("with the store down: %+v, %v", got, err)
		}
	}
	pinned, err := rt.Run(t.Context(), run.Request{Skill: "hello", Digest: res.Digest[:20], Args: json.RawMessage(`{}`), Who: access.Local("test")})
	if err != nil || !pinned.Success {
		t.Fatalf("pinned, with the store down: %+v, %v", pinned, err)
	}
	if n := u.calls.Load() - before; n != 0 {
		t.Fatalf("runs made %d calls to the version store", n)
	}
	// An install needs the store, and says so.
	if _, err := rt.ChangeVersion(t.Context(), access.Principal{Key: "rel", Role: access.RolePublisher}, "hello", res.Digest, "deprecate", ""); !errors.Is(err, errUnreachable) {
		t.Fatalf("a transition with the store down: %v", err)
	}
}

// Replicas sharing a store see each other's version changes without a restart: a publish, then
// a yank, on one holds on the other as soon as it reads the store's changes (every second).
func TestReplicasFollowVersionChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	open := func() store.Store {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := catalogRuntime(t, open(), "../skills"), catalogRuntime(t, open(), "../skills")
	res, err := hello(t, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hello(t, b); err != nil { // b knows the same draft
		t.Fatal(err)
	}
	pub := access.Principal{Key: "rel", Role: access.RolePublisher}
	if _, err := a.ChangeVersion(t.Context(), pub, "hello", res.Digest, "publish", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ChangeVersion(t.Context(), pub, "hello", res.Digest, "yank", "leaks"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := hello(t, b)
		if errors.Is(err, run.ErrNotFound) {
			break // yanked on a: never runs on b either
		}
		if time.Now().After(deadline) {
			t.Fatalf("b still runs a version a yanked a minute ago: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
