package runtime

import (
	"time"

	"github.com/skillbox-dev/skillbox/history/outbox"
)

// Health is what a runtime says of itself and of what it depends on: whether it can take runs,
// and how its stores stand. A face reports it (GET /readyz); the runtime decides it.
type Health struct {
	// Ready says whether the runtime takes runs: false once it is closing, and while its run
	// records cannot be kept (the store is unreachable and the spool is nearly full, or drops
	// them: no space left on its device), so a load balancer sends runs to a replica that can
	// keep them.
	Ready bool `json:"ready"`
	// Reason says why it is not ready.
	Reason string `json:"reason,omitempty"`
	// Admission is what runs and waits now, against the bounds.
	Admission AdmissionStats `json:"admission"`
	// Records is the run records' way to the store (Config.Recorder, when it reports it): nil
	// without one.
	Records *outbox.Stats `json:"records,omitempty"`
	// Versions is the version store as the runtime reads it: nil without one.
	Versions *VersionsHealth `json:"versions,omitempty"`
}

// VersionsHealth is how the runtime reads its version store.
type VersionsHealth struct {
	// Up is false from a failed read of the store's changes until one succeeds: meanwhile runs
	// serve the versions known, and installs and transitions are refused.
	Up bool `json:"up"`
	// ReadAt is the last successful read of the changes (zero before the first).
	ReadAt time.Time `json:"read_at,omitzero"`
	// Known is how many versions the runtime holds in memory.
	Known int `json:"known"`
}

// spoolNearlyFull is how full the spool of run records may be, while the store is
// unreachable, before the runtime says it is not ready: a little room stays for the runs in
// flight.
const spoolNearlyFull = 0.9

// recordStats is what a Recorder that reports its outbox implements (store.Recorder does).
type recordStats interface{ Stats() outbox.Stats }

// Health says whether rt takes runs, and how its dependencies stand.
func (rt *Runtime) Health() Health {
	root := rt
	if rt.parent != nil {
		root = rt.parent
	}
	h := Health{Ready: true, Admission: AdmissionStats(rt.admission.Stats())}
	if rs, ok := root.cfg.Recorder.(recordStats); ok {
		st := rs.Stats()
		h.Records = &st
		switch {
		case !st.Up && st.Losing:
			h.Ready, h.Reason = false, "the store is unreachable and the spool of run records cannot keep them (full, or no space left on its device): runs' records are being lost"
		case !st.Up && st.MaxSpoolBytes > 0 && float64(st.SpoolBytes) >= spoolNearlyFull*float64(st.MaxSpoolBytes):
			h.Ready, h.Reason = false, "the store is unreachable and the spool of run records is nearly full: new runs' records would be lost"
		}
	}
	if root.versions != nil {
		h.Versions = &VersionsHealth{Up: true}
		if c := root.versions.cat; c != nil {
			c.mu.RLock()
			h.Versions.Up, h.Versions.ReadAt = c.loaded && !c.down, c.readAt
			for _, l := range c.lists {
				h.Versions.Known += len(l)
			}
			c.mu.RUnlock()
		}
	}
	root.closeMu.RLock()
	closed := root.closed
	root.closeMu.RUnlock()
	if closed {
		h.Ready, h.Reason = false, "the runtime is closing"
	}
	return h
}
