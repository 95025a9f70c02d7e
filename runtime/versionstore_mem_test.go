package runtime

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/version"
)

// memVersions is a version.Store in memory, for the runtime's own tests until they run on the
// real store.
type memVersions struct {
	mu    sync.Mutex
	vs    []version.Version
	files map[string]map[string][]byte
}

func newVersionStore(t *testing.T) version.Store {
	return &memVersions{files: map[string]map[string][]byte{}}
}

func (m *memVersions) AddVersion(ctx context.Context, v version.Version, files map[string][]byte) (version.Version, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.vs {
		if x.Skill == v.Skill && x.Digest == v.Digest {
			return x, false, nil
		}
	}
	m.vs = append(m.vs, v)
	m.files[v.Skill+v.Digest] = maps.Clone(files)
	return v, true, nil
}

func (m *memVersions) Version(ctx context.Context, skill, digest string) (version.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.vs {
		if x.Skill == skill && x.Digest == digest {
			return x, nil
		}
	}
	return version.Version{}, version.ErrNotFound
}

func (m *memVersions) Versions(ctx context.Context, skill string) ([]version.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []version.Version
	for _, x := range slices.Backward(m.vs) {
		if x.Skill == skill {
			out = append(out, x)
		}
	}
	return out, nil
}

func (m *memVersions) VersionFiles(ctx context.Context, skill, digest string) (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[skill+digest]
	if !ok {
		return nil, version.ErrNotFound
	}
	return maps.Clone(f), nil
}

func (m *memVersions) SetVersionStatus(ctx context.Context, skill, digest string, t version.Transition, by, note string, at time.Time) (version.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.vs {
		x := &m.vs[i]
		if x.Skill != skill || x.Digest != digest {
			continue
		}
		if !t.Allows(x.Status) {
			return *x, version.ErrConflict
		}
		if t.To == version.Active {
			for j := range m.vs {
				if m.vs[j].Skill == skill && m.vs[j].Status == version.Active {
					m.vs[j].Status = version.Deprecated
				}
			}
		}
		x.Status, x.UpdatedBy, x.UpdatedAt, x.Note = t.To, by, at, note
		return *x, nil
	}
	return version.Version{}, version.ErrNotFound
}

func (m *memVersions) FindVersions(ctx context.Context, q version.Query) ([]version.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []version.Version
	for _, x := range slices.Backward(m.vs) {
		if x.Status == q.Status && (q.Viewer == "" || x.User == "" || x.User == q.Viewer) && len(out) < q.Limit {
			out = append(out, x)
		}
	}
	return out, nil
}
