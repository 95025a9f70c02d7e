package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/version"
)

// BenchmarkVersionNote is how long another replica takes to hear of a version change: a
// publish or a deprecation committed by one store, until a subscriber of another store over the
// same database has its note ("heard"), against the same change committed in a database nobody
// listens to ("commit"), the two interleaved. "heard-x-commit" is their ratio, and
// "heard-p50-ns" what a replica's catalog waits before it reads the change (the issue asks for
// 2 s; the poll alone is up to 1 s).
//
//	go test -run '^$' -bench VersionNote -benchtime 200x ./store/postgres/
func BenchmarkVersionNote(b *testing.B) {
	dsn, here := newDatabase(b)
	_, floor := newDatabase(b)
	notes := openStore(b, dsn).(version.Notifier).VersionNotes(b.Context())
	heard := func(what string) {
		select {
		case <-notes:
		case <-time.After(time.Minute):
			b.Fatalf("no note %s within a minute", what)
		}
	}
	heard("that the listener listens")
	change := versionFlipper(b, here)
	heard("of the version recorded")
	p50 := interleave.Run(b,
		interleave.Contender{Name: "commit", F: versionFlipper(b, floor)},
		interleave.Contender{Name: "heard", F: func() { change(); heard("of a change") }})
	b.ReportMetric(p50["heard"]/p50["commit"], "heard-x-commit")
}

// versionFlipper records a version in s and returns a func that moves it between active and
// deprecated, so that every call commits a change.
func versionFlipper(b *testing.B, s store.Store) func() {
	v := version.Version{Skill: "hello", Digest: "sha256:" + strings.Repeat("ef", 32), Version: "1.0.0",
		Status: version.Draft, CreatedAt: time.Now()}
	if _, _, err := s.AddVersion(b.Context(), v, map[string][]byte{"skill.json": []byte("{}")}); err != nil {
		b.Fatal(err)
	}
	active := false
	return func() {
		action := "publish"
		if active {
			action = "deprecate"
		}
		if _, err := s.SetVersionStatus(b.Context(), "hello", v.Digest, version.Transitions[action], "bench", "", time.Now()); err != nil {
			b.Fatal(err)
		}
		active = !active
	}
}
