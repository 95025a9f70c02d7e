package runtime

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/skillbox-dev/skillbox/version"
)

// versionPoll is how often a runtime reads the changes of its version store: a version another
// replica records, publishes or yanks serves here within about that, or at once when the store
// tells of its changes (version.Notifier).
const versionPoll = time.Second

// feedPage is how many changes one read of the feed asks for.
const feedPage = version.MaxQuery

// versionCatalog holds every version of a tenant's store in memory (their records, not their
// files), kept current from the store's version.Feed, so that picking the version a run serves
// never reads the store: a store that is down or slow costs a run nothing while its versions
// are known. The tenant's Runtime and its users' views share one; a user's own skills are
// filed under "<id>@<scope>", as the store files them.
type versionCatalog struct {
	feed   version.Feed
	logger *slog.Logger
	poll   time.Duration // versionPoll; longer in the test of the store's notes

	// refreshMu makes one refresh at a time: a second waits, then reads what came after.
	refreshMu sync.Mutex

	mu     sync.RWMutex
	lists  map[string][]version.Version // by skill as stored, newest first; never changed in place
	seq    int64                        // the last change applied
	loaded bool                         // every version was read once
	down   bool                         // the last refresh failed
	readAt time.Time                    // the last refresh that succeeded
}

func newVersionCatalog(feed version.Feed, logger *slog.Logger) *versionCatalog {
	return &versionCatalog{feed: feed, logger: logger, poll: versionPoll, lists: map[string][]version.Version{}}
}

// get returns skill's versions (as stored: "<id>@<scope>" for a user's own), newest first, and
// whether the catalog has read every version yet. The slice is shared: never change it.
func (c *versionCatalog) get(skill string) ([]version.Version, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lists[skill], c.loaded
}

// refresh applies the changes made after the last it applied (every version, the first time).
func (c *versionCatalog) refresh(ctx context.Context) error {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	c.mu.RLock()
	since := c.seq
	c.mu.RUnlock()
	for {
		vs, last, err := c.feed.Changes(ctx, since, feedPage)
		if err != nil {
			c.mu.Lock()
			if !c.down {
				c.logger.Error("skill versions: the store's changes cannot be read; runs go on with the versions known", "err", err)
			}
			c.down = true
			c.mu.Unlock()
			return fmt.Errorf("read the changes of skill versions: %w", err)
		}
		c.mu.Lock()
		c.applyLocked(vs)
		c.seq = last
		if len(vs) < feedPage {
			if c.down {
				c.logger.Info("skill versions: the store's changes are read again")
			}
			c.loaded, c.down, c.readAt = true, false, time.Now()
		}
		c.mu.Unlock()
		if len(vs) < feedPage {
			return nil
		}
		since = last
	}
}

// apply puts vs, changed here, in the catalog now, before the feed brings them: what this
// process records or moves serves at once.
func (c *versionCatalog) apply(vs ...version.Version) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range vs {
		if v.Status == version.Active {
			// The store deprecated the active version this one replaces, in the same
			// transaction: so does the catalog, until the feed says so itself.
			list := slices.Clone(c.lists[v.Skill])
			for i := range list {
				if list[i].Status == version.Active && list[i].Digest != v.Digest {
					list[i].Status = version.Deprecated
				}
			}
			c.lists[v.Skill] = list
		}
	}
	c.applyLocked(vs)
}

// applyLocked replaces or adds each of vs in its skill's list, which stays newest first.
func (c *versionCatalog) applyLocked(vs []version.Version) {
	for _, v := range vs {
		list := slices.Clone(c.lists[v.Skill])
		if i := slices.IndexFunc(list, func(x version.Version) bool { return x.Digest == v.Digest }); i >= 0 {
			list[i] = v
		} else {
			list = append(list, v)
			slices.SortStableFunc(list, func(a, b version.Version) int {
				if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
					return c
				}
				return cmp.Compare(b.Digest, a.Digest)
			})
		}
		c.lists[v.Skill] = list
	}
}

// follow refreshes the catalog every poll, and at once when the store says there are
// changes (a version.Notifier's note), until ctx ends.
func (c *versionCatalog) follow(ctx context.Context) {
	t := time.NewTicker(c.poll)
	defer t.Stop()
	var notes <-chan struct{} // nil: the store cannot tell, and the poll alone reads changes
	if n, ok := c.feed.(version.Notifier); ok {
		notes = n.VersionNotes(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-notes:
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, 10*versionPoll)
		_ = c.refresh(rctx) // logged once per outage
		cancel()
	}
}
