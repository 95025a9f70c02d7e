package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/internal/sqldb"
	"github.com/skillbox-dev/skillbox/version"
)

// The shape of the filled version store: two tenants of reviewSkills skills with
// reviewVersions versions each, 1 version in 997 pending (101 per tenant, spread over the
// skills), a tenth of the skills a user's own.
const (
	reviewSkills   = 1000
	reviewVersions = 100
)

// BenchmarkReviewQueue times the review queue (GET /v1/versions: a tenant's pending versions,
// the default page of 100) in a store of 200,000 versions, on SQLite and on PostgreSQL (when
// its binaries are installed), interleaved with the floor: one version read by its key
// (Store.Version), the cheapest read a version command makes. It reports both and their ratio,
// queue/floor, for a page of 100 against one row.
func BenchmarkReviewQueue(b *testing.B) {
	now := time.Now().UTC()
	benchStores(b, func(b *testing.B, driver string, s store.Store) {
		for _, tenant := range []string{"acme", "other"} {
			fillVersions(b, s.Tenant(tenant).(*sqldb.DB), now)
		}
		if driver == "postgres" {
			if _, err := s.(*sqldb.DB).SQL().ExecContext(b.Context(), "ANALYZE versions"); err != nil {
				b.Fatal(err) // as autovacuum would soon after a bulk load
			}
		}
		acme := s.Tenant("acme")
		// What Runtime.FindVersions asks for the default page: one more, to know there are more.
		q := version.Query{Status: version.Pending, Limit: version.DefaultQuery + 1}
		i := 0
		p50 := interleave.Run(b,
			interleave.Contender{Name: "floor", F: func() {
				i++
				v := reviewVersion(i*7919%(reviewSkills*reviewVersions), now)
				if _, err := acme.Version(b.Context(), v.Skill, v.Digest); err != nil {
					b.Fatal(err)
				}
			}},
			interleave.Contender{Name: "queue", F: func() {
				list, err := acme.FindVersions(b.Context(), q)
				if err != nil || len(list) != q.Limit {
					b.Fatalf("the queue: %d versions, %v", len(list), err)
				}
			}})
		b.ReportMetric(p50["queue"]/p50["floor"], "x-floor")
	})
}

// fillVersions writes the versions of one tenant (reviewVersion 0 to reviewSkills *
// reviewVersions - 1) into s in one transaction.
func fillVersions(b *testing.B, s *sqldb.DB, now time.Time) {
	n := reviewSkills * reviewVersions
	vs := make([]version.Version, n)
	for i := range vs {
		vs[i] = reviewVersion(i, now)
	}
	if err := s.InsertVersions(b.Context(), vs); err != nil {
		b.Fatal(err)
	}
}

// reviewVersion is version i of a tenant's store: skill i % reviewSkills, newer as i grows.
func reviewVersion(i int, now time.Time) version.Version {
	k := i % reviewSkills
	v := version.Version{Skill: fmt.Sprintf("skill-%04d", k), Digest: fmt.Sprintf("sha256:%064x", i), Version: "1.0.0",
		Status: version.Deprecated, Source: "upload", CreatedBy: "key-ops", CreatedAt: now.Add(time.Duration(i-1_000_000) * time.Second)}
	if k%10 == 0 {
		user := fmt.Sprintf("user-%d", k)
		v.Skill, v.User = v.Skill+"@"+access.UserScope(user), user
	}
	if i%997 == 0 { // spread over the skills, users' own too
		v.Status = version.Pending
	}
	return v
}
