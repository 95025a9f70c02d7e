package server

import (
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/runtime"
)

// writeStoreMetrics adds how the stores stand, from h: the run records' way to the store (its
// outbox and spool) and the version store's feed. They are the process's, as the recorder is.
func writeStoreMetrics(b *strings.Builder, h runtime.Health, gauge func(name, help string, v any), counter func(name, help string, v int64)) {
	up := func(ok bool) int {
		if ok {
			return 1
		}
		return 0
	}
	if r := h.Records; r != nil {
		gauge("skillbox_store_up", "1 while the store takes run records, 0 from a failed write until one succeeds.", up(r.Up))
		counter("skillbox_store_write_errors_total", "Writes of run records the store failed.", int64(r.WriteErrors))
		counter("skillbox_store_commits_total", "Commits of run records (each holds the records that came during the one before).", int64(r.Commits))
		counter("skillbox_records_written_total", "Run records (starts and ends) the store took.", int64(r.Written))
		gauge("skillbox_records_queued", "Run records waiting for the next commit.", r.Queued)
		gauge("skillbox_records_spooled", "Run records waiting in the spool for the store.", r.Spooled)
		gauge("skillbox_spool_bytes", "Bytes the spool of run records holds.", r.SpoolBytes)
		gauge("skillbox_spool_max_bytes", "The spool's bound: past it, records are dropped.", r.MaxSpoolBytes)
		age := 0.0
		if !r.OldestSpooled.IsZero() {
			age = time.Since(r.OldestSpooled).Seconds()
		}
		gauge("skillbox_spool_oldest_age_seconds", "How long the oldest spooled record has waited (0 when the spool is empty).", age)
		counter("skillbox_records_dropped_total", "Run records lost: the store was unreachable and the spool full.", int64(r.Dropped))
	}
	if v := h.Versions; v != nil {
		gauge("skillbox_versions_up", "1 while the version store's changes are read, 0 from a failed read until one succeeds.", up(v.Up))
		gauge("skillbox_versions_known", "Skill versions held in memory.", v.Known)
	}
	gauge("skillbox_ready", "1 while this replica takes runs (GET /readyz answers 200).", up(h.Ready))
}
