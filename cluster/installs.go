package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// The catalog bucket says, for every skill installed through a node (an upload, a bundle, an
// agent's skill), which version its directory holds: a pointer to a version of the version
// store, never the files. Every node follows it and unpacks what it points to from the store.

// catalogBucket names the catalog of a cluster named name.
func catalogBucket(name string) string { return strings.ToUpper(name) + "_CATALOG" }

// maxCatalogBytes bounds the catalog in all: one small value per installed skill.
const maxCatalogBytes = 64 << 20

// installNote is a catalog value: the digest of the version installed, "" once removed (a put,
// not a delete, so a node that starts later still learns of the removal).
type installNote struct {
	Digest string `json:"digest"`
}

// maxDigest bounds a digest a node reads from the catalog ("sha256:" and 64 hex digits).
const maxDigest = 71

// installKey is "<tenant>.<scope>.<skill>" ("_" for the default tenant and for the tenant's
// own skills); false when a part is no name.
func installKey(tenant, scope, skill string) (string, bool) {
	t, ok1 := token(tenant)
	s, ok2 := token(scope)
	return t + "." + s + "." + skill, ok1 && ok2 && validName(skill)
}

// AnnounceInstall tells every node that skill (of tenant; scope "" for the tenant's own, else a
// user's scope) is now at digest, or removed when digest is "". It returns the catalog's
// revision of the note: a node skips older notes of a key it announced itself.
func (n *Node) AnnounceInstall(ctx context.Context, tenant, scope, skill, digest string) (uint64, error) {
	key, ok := installKey(tenant, scope, skill)
	if !ok || len(digest) > maxDigest {
		return 0, fmt.Errorf("cluster: announce install: %q of tenant %q (scope %q) is not a skill", skill, tenant, scope)
	}
	data, err := json.Marshal(installNote{Digest: digest})
	if err != nil {
		return 0, err
	}
	rev, err := n.catalog.Put(ctx, key, data)
	if err != nil {
		return 0, fmt.Errorf("cluster: announce install of %s: %w", key, err)
	}
	return rev, nil
}

// InstalledDigest returns the digest the catalog holds for skill ("" once removed); found is
// false when no node ever installed it.
func (n *Node) InstalledDigest(ctx context.Context, tenant, scope, skill string) (digest string, found bool, err error) {
	key, ok := installKey(tenant, scope, skill)
	if !ok {
		return "", false, nil
	}
	e, err := n.leaderGet(ctx, catalogBucket(n.cfg.Name), key)
	switch {
	case errors.Is(err, errKeyNotFound):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("cluster: read the catalog at %s: %w", key, err)
	}
	note, err := readNote(e.value)
	if err != nil {
		return "", false, fmt.Errorf("cluster: the catalog at %s: %w", key, err)
	}
	return note.Digest, true, nil
}

// FollowInstalls calls apply for every skill of tenant the catalog holds, then for every note
// put after, in order, until ctx ends or the watch fails (its error). apply runs on this
// goroutine, one note at a time; rev is the note's revision.
func (n *Node) FollowInstalls(ctx context.Context, tenant string, apply func(scope, skill, digest string, rev uint64)) error {
	t, ok := token(tenant)
	if !ok {
		return fmt.Errorf("cluster: follow installs: %q is not a tenant", tenant)
	}
	w, err := n.catalog.Watch(ctx, t+".>", jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("cluster: follow the catalog of %s: %w", t, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, open := <-w.Updates():
			if !open {
				return errors.New("cluster: the catalog's watch ended")
			}
			if e == nil { // the values held at the start are all delivered
				continue
			}
			parts := strings.Split(e.Key(), ".")
			note, err := readNote(e.Value())
			if len(parts) != 3 || err != nil {
				n.cfg.Logger.Warn("cluster: an unreadable catalog entry is skipped", "key", e.Key(), "err", err)
				continue
			}
			scope := parts[1]
			if scope == "_" {
				scope = ""
			}
			apply(scope, parts[2], note.Digest, e.Revision())
		}
	}
}

// readNote reads a catalog value, bounded.
func readNote(data []byte) (installNote, error) {
	var note installNote
	if err := json.Unmarshal(data, &note); err != nil {
		return note, err
	}
	if len(note.Digest) > maxDigest {
		return note, errors.New("the digest is too long")
	}
	return note, nil
}
