package postgres_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/version"
)

// noteBound bounds the wait for a note, which takes milliseconds: far longer than any note
// takes on a loaded machine, and far shorter than the hour-long poll a catalog would otherwise
// need in the runtime's own test of notes.
const noteBound = 60 * time.Second

// awaitNote fails t unless notes receives within noteBound.
func awaitNote(t *testing.T, notes <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-notes:
	case <-time.After(noteBound):
		t.Fatalf("no note %s within %v", what, noteBound)
	}
}

// listening counts the connections that LISTEN on dsn's database, through admin.
func listening(t *testing.T, admin *sql.DB) int {
	t.Helper()
	var n int
	if err := admin.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// awaitNoListener fails t unless no connection listens on admin's database within noteBound.
func awaitNoListener(t *testing.T, admin *sql.DB, after string) {
	t.Helper()
	for deadline := time.Now().Add(noteBound); listening(t, admin) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the listening connection is still open %v after %s", noteBound, after)
		}
	}
}

// Two stores over one database, as two replicas hold them: a version one records or moves is
// told to the other's subscribers (every tenant's: one listener serves them all), and a
// listener whose connection the server ends listens again and says so.
func TestVersionNotesReachOtherReplicas(t *testing.T) {
	ctx := t.Context()
	dsn, a := newDatabase(t)
	b := openStore(t, dsn)
	notes := b.Tenant("acme").(version.Notifier).VersionNotes(ctx)
	awaitNote(t, notes, "that the listener listens") // from here on, no change is missed
	v := version.Version{Skill: "hello", Digest: "sha256:" + strings.Repeat("ab", 32), Version: "1.0.0", Status: version.Draft, CreatedAt: time.Now()}
	if _, _, err := a.AddVersion(ctx, v, map[string][]byte{"skill.json": []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	awaitNote(t, notes, "of a version recorded by another replica, of another tenant")
	if _, err := a.SetVersionStatus(ctx, "hello", v.Digest, version.Transitions["publish"], "test", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	awaitNote(t, notes, "of a version moved by another replica")

	admin := adminOf(t, dsn)
	var ended int
	if err := admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&ended); err != nil || ended != 1 {
		t.Fatalf("ended %d listening connections (%v), want 1", ended, err)
	}
	awaitNote(t, notes, "that the listener listens again")
	if _, err := a.SetVersionStatus(ctx, "hello", v.Digest, version.Transitions["yank"], "test", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	awaitNote(t, notes, "of a yank after the listener came back")
}

// The listening connection is held only while someone subscribes.
func TestVersionNotesListenOnlyForSubscribers(t *testing.T) {
	dsn, s := newDatabase(t)
	admin := adminOf(t, dsn)
	ctx, cancel := context.WithCancel(t.Context())
	awaitNote(t, s.(version.Notifier).VersionNotes(ctx), "that the listener listens")
	if n := listening(t, admin); n != 1 {
		t.Fatalf("%d listening connections with a subscriber, want 1", n)
	}
	cancel()
	awaitNoListener(t, admin, "its last subscriber left")
}

// Closing the store closes its listening connection, subscribers or not.
func TestVersionNotesEndWithTheStore(t *testing.T) {
	dsn, s := newDatabase(t)
	admin := adminOf(t, dsn)
	awaitNote(t, s.(version.Notifier).VersionNotes(t.Context()), "that the listener listens")
	s.Close()
	if notes := s.(version.Notifier).VersionNotes(t.Context()); notes != nil {
		t.Error("a closed store still offers notes")
	}
	awaitNoListener(t, admin, "the store closed")
}
