package runtime

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/pgserver/pgtest"
	"github.com/skillbox-dev/skillbox/store/postgres"
	"github.com/skillbox-dev/skillbox/version"
)

// A catalog over a PostgreSQL store reads another replica's change when the store tells of it,
// not at its next poll: with the poll an hour apart, a version recorded, then yanked, by
// another store over the same database reaches the catalog all the same.
func TestCatalogFollowsTheStoresNotes(t *testing.T) {
	srv := pgtest.Start(t)
	dsn, err := srv.NewDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	here, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { here.Close() })
	there, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { there.Close() })

	cat := newVersionCatalog(here.(version.Feed), slog.New(slog.DiscardHandler))
	cat.poll = time.Hour
	ctx, cancel := context.WithCancel(t.Context())
	followed := make(chan struct{})
	go func() { defer close(followed); cat.follow(ctx) }()
	t.Cleanup(func() { cancel(); <-followed })

	status := func() version.Status {
		if list, _ := cat.get("hello"); len(list) > 0 {
			return list[0].Status
		}
		return ""
	}
	// A change made before the store's listener listens is read at its first note, which it
	// sends once it listens.
	v := version.Version{Skill: "hello", Digest: "sha256:" + strings.Repeat("cd", 32), Version: "1.0.0",
		Status: version.Draft, CreatedAt: time.Now()}
	if _, _, err := there.AddVersion(t.Context(), v, map[string][]byte{"skill.json": []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		action string
		want   version.Status
	}{{"", version.Draft}, {"publish", version.Active}, {"yank", version.Yanked}} {
		if step.action != "" {
			if _, err := there.SetVersionStatus(t.Context(), "hello", v.Digest, version.Transitions[step.action], "test", "", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.Now().Add(time.Minute) // a note takes milliseconds; the poll, an hour
		for status() != step.want {
			if time.Now().After(deadline) {
				t.Fatalf("after %q the catalog says %q, want %q: the store's note was not followed", step.action, status(), step.want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
