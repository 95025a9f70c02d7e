package sqldb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/store"
)

var _ artifact.Store = (*DB)(nil)

// The bounds of one run's artifacts: those the runtime's policy can allow at most, so that any
// run the runtime collects the store can keep.
const (
	maxRunArtifacts    = 4096
	maxArtifactBytes   = 256 << 20
	maxRunIDBytes      = 128
	maxMediaTypeBytes  = 256
	artifactBlobsQuery = `SELECT COALESCE(SUM(b.size), 0) FROM blobs b WHERE EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)`
)

// PutArtifacts keeps files as runID's artifacts within store.DefaultMaxArtifactBytes.
func (s *DB) PutArtifacts(ctx context.Context, runID string, files []artifact.File) error {
	return s.PutArtifactsWithin(ctx, runID, files, 0)
}

// PutArtifactsWithin keeps files as runID's artifacts, in one transaction, unless the bytes of
// the blobs artifacts hold would pass quota: each distinct content counts once, however many
// runs left it, and a content the store holds for artifacts already costs nothing more.
// Versions' blobs do not count: they are bounded by what is installed. The quota is checked
// under a lock (SQLite's write transaction; PostgreSQL's advisory lock on blobs) so concurrent
// runs cannot overshoot it together.
func (s *DB) PutArtifactsWithin(ctx context.Context, runID string, files []artifact.File, quota int64) error {
	if err := checkArtifacts(runID, files); err != nil {
		return err
	}
	switch {
	case quota == 0:
		quota = store.DefaultMaxArtifactBytes
	case quota < 0:
		quota = 0 // store.Unlimited
	}
	now := time.Now().UnixNano()
	return s.inTx(ctx, "keep the artifacts of run "+runID, func(tx *sql.Tx) error {
		if err := s.lockBlobs(ctx, tx); err != nil {
			return err
		}
		if quota > 0 {
			var used int64
			if err := tx.QueryRowContext(ctx, artifactBlobsQuery).Scan(&used); err != nil {
				return err
			}
			more, err := s.newArtifactBytes(ctx, tx, files)
			if err != nil {
				return err
			}
			if used+more > quota {
				return fmt.Errorf("%w: the store's artifacts hold %d bytes, and %d more would pass its quota of %d", run.ErrQuotaExceeded, used, more, quota)
			}
		}
		for _, f := range files {
			data, err := readArtifact(f)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING`),
				f.SHA256, f.Size, data); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO artifacts (tenant, run_id, name, size, sha256, media_type, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
				s.tenant, runID, f.Name, f.Size, f.SHA256, f.MediaType, now); err != nil {
				if isUniqueViolation(err) {
					return fmt.Errorf("run %s has an artifact %q already: a run's artifacts are kept once", runID, f.Name)
				}
				return err
			}
		}
		return nil
	})
}

// newArtifactBytes is what files add to the bytes artifacts hold: the size of each distinct
// content no artifact holds yet.
func (s *DB) newArtifactBytes(ctx context.Context, tx *sql.Tx, files []artifact.File) (int64, error) {
	seen := map[string]bool{}
	var more int64
	for _, f := range files {
		if seen[f.SHA256] {
			continue
		}
		seen[f.SHA256] = true
		var held int
		err := tx.QueryRowContext(ctx, s.q(`SELECT 1 FROM artifacts WHERE sha256 = ? LIMIT 1`), f.SHA256).Scan(&held)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			more += f.Size
		case err != nil:
			return 0, err
		}
	}
	return more, nil
}

// checkArtifacts says what is wrong with a run's files before anything is read.
func checkArtifacts(runID string, files []artifact.File) error {
	switch {
	case runID == "" || len(runID) > maxRunIDBytes:
		return fmt.Errorf("keep artifacts: run id %q must be 1 to %d bytes", runID, maxRunIDBytes)
	case len(files) > maxRunArtifacts:
		return fmt.Errorf("keep the artifacts of run %s: %d files, more than %d", runID, len(files), maxRunArtifacts)
	}
	names := map[string]bool{}
	for _, f := range files {
		switch {
		case !artifact.ValidName(f.Name):
			return fmt.Errorf("keep the artifacts of run %s: %q is not an artifact name", runID, f.Name)
		case names[f.Name]:
			return fmt.Errorf("keep the artifacts of run %s: %q is listed twice", runID, f.Name)
		case f.Size < 0 || f.Size > maxArtifactBytes:
			return fmt.Errorf("keep the artifacts of run %s: %q has a size of %d, not 0 to %d", runID, f.Name, f.Size, maxArtifactBytes)
		case len(f.SHA256) != 64 || !isHex(f.SHA256):
			return fmt.Errorf("keep the artifacts of run %s: %q has no sha256 of 64 lower-case hex digits", runID, f.Name)
		case f.MediaType == "" || len(f.MediaType) > maxMediaTypeBytes:
			return fmt.Errorf("keep the artifacts of run %s: %q has a media type of %d bytes, not 1 to %d", runID, f.Name, len(f.MediaType), maxMediaTypeBytes)
		case f.Open == nil:
			return fmt.Errorf("keep the artifacts of run %s: %q has no Open", runID, f.Name)
		}
		names[f.Name] = true
	}
	return nil
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// readArtifact reads f's bytes, at most its size, and checks them against its sha256.
func readArtifact(f artifact.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("read artifact %q: %w", f.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, f.Size+1))
	if err != nil {
		return nil, fmt.Errorf("read artifact %q: %w", f.Name, err)
	}
	if sum := sha256.Sum256(data); int64(len(data)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, fmt.Errorf("artifact %q: its bytes are not the %d bytes of sha256 %s it was listed with", f.Name, f.Size, f.SHA256)
	}
	return data, nil
}

// OpenArtifact reads the artifact name of run runID of s's tenant, checked against its sha256,
// for viewer: "" any run's; any other viewer only a run recorded as the tenant's or viewer's own.
func (s *DB) OpenArtifact(ctx context.Context, viewer, runID, name string) (io.ReadCloser, artifact.Artifact, error) {
	if err := s.check(); err != nil {
		return nil, artifact.Artifact{}, err
	}
	if viewer != "" {
		// The run's record says who sees it; an artifact without one is no run to a viewer.
		var one int
		err := s.db.QueryRowContext(ctx, s.q(`SELECT 1 FROM runs WHERE id = ? AND tenant = ? AND (visible_to = '' OR visible_to = ?)`),
			runID, s.tenant, viewer).Scan(&one)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, artifact.Artifact{}, fmt.Errorf("run %q: %w", runID, artifact.ErrNoRun)
		case err != nil:
			return nil, artifact.Artifact{}, fmt.Errorf("artifact %q of run %s: %s %s: %w", name, runID, s.dialect.Name, s.where, err)
		}
	}
	a := artifact.Artifact{Name: name}
	var data []byte
	err := s.db.QueryRowContext(ctx, s.q(`SELECT a.size, a.sha256, a.media_type, b.data FROM artifacts a JOIN blobs b ON b.sha256 = a.sha256
		WHERE a.tenant = ? AND a.run_id = ? AND a.name = ?`), s.tenant, runID, name).Scan(&a.Size, &a.SHA256, &a.MediaType, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, artifact.Artifact{}, s.noArtifact(ctx, runID, name)
	}
	if err != nil {
		return nil, artifact.Artifact{}, fmt.Errorf("artifact %q of run %s: %s %s: %w", name, runID, s.dialect.Name, s.where, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != a.SHA256 || int64(len(data)) != a.Size {
		return nil, artifact.Artifact{}, fmt.Errorf("artifact %q of run %s does not match its sha256 %s: the %s database %s was changed outside skillbox", name, runID, a.SHA256, s.dialect.Name, s.where)
	}
	return io.NopCloser(bytes.NewReader(data)), a, nil
}

// noArtifact says which is missing: the run (neither recorded nor with artifacts) or the file.
func (s *DB) noArtifact(ctx context.Context, runID, name string) error {
	var one int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT 1 FROM runs WHERE id = ? AND tenant = ? UNION ALL SELECT 1 FROM artifacts WHERE run_id = ? AND tenant = ? LIMIT 1`),
		runID, s.tenant, runID, s.tenant).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("run %q: %w", runID, artifact.ErrNoRun)
	case err != nil:
		return fmt.Errorf("artifact %q of run %s: %s %s: %w", name, runID, s.dialect.Name, s.where, err)
	}
	return fmt.Errorf("run %q has no artifact %q: %w", runID, name, artifact.ErrNoArtifact)
}

// lockBlobs serialises, within tx, the transactions that add or drop blobs where the database
// does not already (PostgreSQL): an artifact's blob cannot be swept while a run adds a reference
// to it, and two runs cannot pass the quota together.
func (s *DB) lockBlobs(ctx context.Context, tx *sql.Tx) error {
	if s.dialect.LockBlobs == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, s.dialect.LockBlobs)
	return err
}

// dropArtifacts deletes, in tx, the artifacts of s's tenant's runs that match where (a
// condition on runs with its arguments), then every blob they held that no other artifact and
// no version holds. Binding the artifacts to the tenant too lets both statements seek the
// artifacts' key (tenant, run_id, name) instead of reading every artifact.
func (s *DB) dropArtifacts(ctx context.Context, tx *sql.Tx, where string, args ...any) error {
	doomed := `SELECT id FROM runs WHERE ` + where
	args = append([]any{s.tenant}, args...)
	rows, err := tx.QueryContext(ctx, s.q(`SELECT DISTINCT sha256 FROM artifacts WHERE tenant = ? AND run_id IN (`+doomed+`)`), args...)
	if err != nil {
		return err
	}
	var blobs []string
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			rows.Close()
			return err
		}
		blobs = append(blobs, b)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(blobs) == 0 {
		return err
	}
	if err := s.lockBlobs(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM artifacts WHERE tenant = ? AND run_id IN (`+doomed+`)`), args...); err != nil {
		return err
	}
	for _, b := range blobs {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM blobs WHERE sha256 = ?
			AND NOT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?) AND NOT EXISTS (SELECT 1 FROM version_files WHERE blob = ?)`), b, b, b); err != nil {
			return err
		}
	}
	return nil
}

// runArtifacts lists the artifacts of run id, by name: at most maxRunArtifacts, all a run can
// keep (PutArtifactsWithin checks it), so the list is bounded.
func (s *DB) runArtifacts(ctx context.Context, id string) ([]artifact.Artifact, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT name, size, sha256, media_type FROM artifacts WHERE tenant = ? AND run_id = ? ORDER BY name LIMIT ?`),
		s.tenant, id, maxRunArtifacts)
	if err != nil {
		return nil, fmt.Errorf("the artifacts of run %s: %s %s: %w", id, s.dialect.Name, s.where, err)
	}
	defer rows.Close()
	var out []artifact.Artifact
	for rows.Next() {
		var a artifact.Artifact
		if err := rows.Scan(&a.Name, &a.Size, &a.SHA256, &a.MediaType); err != nil {
			return nil, fmt.Errorf("the artifacts of run %s: %s %s: %w", id, s.dialect.Name, s.where, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("the artifacts of run %s: %s %s: %w", id, s.dialect.Name, s.where, err)
	}
	return out, nil
}
