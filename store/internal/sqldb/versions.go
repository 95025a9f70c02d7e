package sqldb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/skillbox-dev/skillbox/version"
)

var _ version.Store = (*DB)(nil)

// The bounds of a version's content: those of a skill tree's digest, so that any tree the
// runtime can name it can record.
const (
	maxVersionFiles = 4096
	maxVersionBytes = 512 << 20
)

// versionColumns are the columns of versions, in the order scanVersion reads them.
const versionColumns = `skill, digest, version, status, source, grant_json, diff, created_by, created_at, updated_by, updated_at, note, owner`

// checkVersion says what is wrong with v and files, naming the field.
func checkVersion(v version.Version, files map[string][]byte) error {
	switch {
	case !version.ValidSkill(v.Skill):
		return fmt.Errorf("version: skill %q is not a skill id", v.Skill)
	case !version.OwnedBy(v.Skill, v.User):
		return fmt.Errorf("version of %s: user %q is not whose skill it is (a user's own skill is filed as <id>@<the user's scope> and names its user; a tenant's names none)", v.Skill, v.User)
	case !validDigest(v.Digest):
		return fmt.Errorf("version of %s: digest %q is not sha256:<64 lower-case hex digits>", v.Skill, v.Digest)
	case !v.Status.Valid():
		return fmt.Errorf("version %s of %s: status %q is not a version status", v.Digest, v.Skill, v.Status)
	case len(files) == 0:
		return fmt.Errorf("version %s of %s: no files", v.Digest, v.Skill)
	case len(files) > maxVersionFiles:
		return fmt.Errorf("version %s of %s: %d files, more than %d", v.Digest, v.Skill, len(files), maxVersionFiles)
	}
	var total int64
	for p, data := range files {
		if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("version %s of %s: file path %q is not a clean relative slash path", v.Digest, v.Skill, p)
		}
		if total += int64(len(data)); total > maxVersionBytes {
			return fmt.Errorf("version %s of %s: files of more than %d bytes", v.Digest, v.Skill, maxVersionBytes)
		}
	}
	return nil
}

func validDigest(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	return ok && len(h) == 64 && strings.Trim(h, "0123456789abcdef") == ""
}

// AddVersion records v and its files unless the store has v already, in one transaction.
func (s *DB) AddVersion(ctx context.Context, v version.Version, files map[string][]byte) (version.Version, bool, error) {
	if err := checkVersion(v, files); err != nil {
		return version.Version{}, false, err
	}
	grant, err := json.Marshal(v.Grant)
	if err != nil {
		return version.Version{}, false, err
	}
	diff, err := json.Marshal(append([]string{}, v.Diff...))
	if err != nil {
		return version.Version{}, false, err
	}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = time.Now().UTC()
	}
	var created bool
	var stored version.Version
	err = s.inTx(ctx, "add version "+v.Digest+" of "+v.Skill, func(tx *sql.Tx) error {
		if err := s.lockVersions(ctx, tx); err != nil {
			return err
		}
		if err := s.lockBlobs(ctx, tx); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO versions (tenant, `+versionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant, skill, digest) DO NOTHING`),
			s.tenant, v.Skill, v.Digest, v.Version, string(v.Status), v.Source, string(grant), string(diff), v.CreatedBy, v.CreatedAt.UnixNano(),
			v.UpdatedBy, nanos(v.UpdatedAt), v.Note, v.User)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if created = n == 1; created {
			if err := s.addEvent(ctx, tx, version.Event{Skill: v.Skill, Digest: v.Digest, Action: "record", Status: v.Status, By: v.CreatedBy, At: v.CreatedAt}); err != nil {
				return err
			}
			names := make([]string, 0, len(files))
			for p := range files {
				names = append(names, p)
			}
			sort.Strings(names)
			for _, p := range names {
				data := files[p]
				sum := sha256.Sum256(data)
				key := hex.EncodeToString(sum[:])
				if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING`),
					key, len(data), data); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO version_files (tenant, skill, digest, path, blob) VALUES (?, ?, ?, ?, ?)`),
					s.tenant, v.Skill, v.Digest, p, key); err != nil {
					return err
				}
			}
		}
		stored, err = scanVersion(tx.QueryRowContext(ctx, s.q(`SELECT `+versionColumns+` FROM versions WHERE tenant = ? AND skill = ? AND digest = ?`), s.tenant, v.Skill, v.Digest))
		return err
	})
	if err != nil {
		return version.Version{}, false, err
	}
	return stored, created, nil
}

// Version returns skill's version at digest.
func (s *DB) Version(ctx context.Context, skill, digest string) (version.Version, error) {
	if err := s.check(); err != nil {
		return version.Version{}, err
	}
	v, err := scanVersion(s.db.QueryRowContext(ctx, s.q(`SELECT `+versionColumns+` FROM versions WHERE tenant = ? AND skill = ? AND digest = ?`), s.tenant, skill, digest))
	if errors.Is(err, sql.ErrNoRows) {
		return version.Version{}, fmt.Errorf("skill %q version %s: %w", skill, digest, version.ErrNotFound)
	}
	if err != nil {
		return version.Version{}, fmt.Errorf("skill %q version %s: %s %s: %w", skill, digest, s.dialect.Name, s.where, err)
	}
	return v, nil
}

// Versions returns skill's versions, newest first.
func (s *DB) Versions(ctx context.Context, skill string) ([]version.Version, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+versionColumns+` FROM versions WHERE tenant = ? AND skill = ? ORDER BY created_at DESC, digest DESC`), s.tenant, skill)
	if err != nil {
		return nil, fmt.Errorf("versions of %q: %s %s: %w", skill, s.dialect.Name, s.where, err)
	}
	defer rows.Close()
	var out []version.Version
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("versions of %q: %w", skill, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// FindVersions returns the tenant's versions q selects, newest first.
func (s *DB) FindVersions(ctx context.Context, q version.Query) ([]version.Version, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	switch {
	case !q.Status.Valid():
		return nil, fmt.Errorf("find versions: status %q is not a version status", q.Status)
	case q.Limit < 1 || q.Limit > version.MaxQuery+1:
		return nil, fmt.Errorf("find versions: limit %d: ask for 1 to %d", q.Limit, version.MaxQuery+1)
	}
	query, args := s.findVersionsQuery(q)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s versions: %s %s: %w", q.Status, s.dialect.Name, s.where, err)
	}
	defer rows.Close()
	var out []version.Version
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("%s versions: %w", q.Status, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// findVersionsQuery is FindVersions' statement: one seek of versions_by_status, in its order.
func (s *DB) findVersionsQuery(q version.Query) (string, []any) {
	where, args := "tenant = ? AND status = ?", []any{s.tenant, string(q.Status)}
	if q.Viewer != "" {
		// A user's own skills are that user's: the tenant's are everyone's. A version of a
		// user's skill recorded before versions named their user names none and is the
		// tenant's admins' alone (its skill carries a scope: '@').
		where += " AND (owner = ? OR (owner = '' AND skill NOT LIKE '%@%'))"
		args = append(args, q.Viewer)
	}
	return s.q(`SELECT ` + versionColumns + ` FROM versions WHERE ` + where + `
		ORDER BY created_at DESC, skill, digest LIMIT ` + fmt.Sprint(q.Limit)), args
}

// VersionFiles returns the files of skill's version at digest, each checked against its sha256.
func (s *DB) VersionFiles(ctx context.Context, skill, digest string) (map[string][]byte, error) {
	if _, err := s.Version(ctx, skill, digest); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT f.path, b.sha256, b.data FROM version_files f JOIN blobs b ON b.sha256 = f.blob
		WHERE f.tenant = ? AND f.skill = ? AND f.digest = ?`), s.tenant, skill, digest)
	if err != nil {
		return nil, fmt.Errorf("files of %q version %s: %s %s: %w", skill, digest, s.dialect.Name, s.where, err)
	}
	defer rows.Close()
	files := map[string][]byte{}
	for rows.Next() {
		var p, key string
		var data []byte
		if err := rows.Scan(&p, &key, &data); err != nil {
			return nil, err
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != key {
			return nil, fmt.Errorf("files of %q version %s: %s does not match its sha256 %s: the %s database %s was changed outside skillbox", skill, digest, p, key, s.dialect.Name, s.where)
		}
		files[p] = data
	}
	return files, rows.Err()
}

// SetVersionStatus moves skill's version at digest by t, in one transaction.
func (s *DB) SetVersionStatus(ctx context.Context, skill, digest string, t version.Transition, by, note string, at time.Time) (version.Version, error) {
	if !t.To.Valid() || len(t.From) == 0 {
		return version.Version{}, fmt.Errorf("set version status: transition %q has no valid from and to", t.Action)
	}
	var out version.Version
	err := s.inTx(ctx, t.Action+" "+skill+" version "+digest, func(tx *sql.Tx) error {
		if err := s.lockVersions(ctx, tx); err != nil {
			return err
		}
		cur, err := scanVersion(tx.QueryRowContext(ctx, s.q(`SELECT `+versionColumns+` FROM versions WHERE tenant = ? AND skill = ? AND digest = ?`), s.tenant, skill, digest))
		if errors.Is(err, sql.ErrNoRows) {
			return version.ErrNotFound
		}
		if err != nil {
			return err
		}
		if !t.Allows(cur.Status) {
			out = cur
			return fmt.Errorf("%w: it is %s, and %s starts from %v", version.ErrConflict, cur.Status, t.Action, t.From)
		}
		if t.To == version.Active {
			var was []string // the active version it replaces: one, or none
			rows, err := tx.QueryContext(ctx, s.q(`SELECT digest FROM versions WHERE tenant = ? AND skill = ? AND status = 'active' AND digest <> ?`), s.tenant, skill, digest)
			if err != nil {
				return err
			}
			for rows.Next() {
				var d string
				if err := rows.Scan(&d); err != nil {
					rows.Close()
					return err
				}
				was = append(was, d)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, d := range was {
				if _, err := tx.ExecContext(ctx, s.q(`UPDATE versions SET status = 'deprecated', updated_by = ?, updated_at = ?
					WHERE tenant = ? AND skill = ? AND digest = ?`), by, at.UnixNano(), s.tenant, skill, d); err != nil {
					return err
				}
				if err := s.addEvent(ctx, tx, version.Event{Skill: skill, Digest: d, Action: "deprecate", Status: version.Deprecated, By: by, At: at,
					Note: "replaced by " + digest}); err != nil {
					return err
				}
			}
		}
		from := make([]any, 0, len(t.From)+7)
		from = append(from, string(t.To), by, at.UnixNano(), note, s.tenant, skill, digest)
		marks := make([]string, len(t.From))
		for i, f := range t.From {
			marks[i] = "?"
			from = append(from, string(f))
		}
		res, err := tx.ExecContext(ctx, s.q(`UPDATE versions SET status = ?, updated_by = ?, updated_at = ?, note = ?
			WHERE tenant = ? AND skill = ? AND digest = ? AND status IN (`+strings.Join(marks, ", ")+`)`), from...)
		if err != nil {
			if isUniqueViolation(err) { // another publish made another version active meanwhile
				return fmt.Errorf("%w: another version of %s was made active at the same time", version.ErrConflict, skill)
			}
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("%w: its status changed meanwhile", version.ErrConflict)
		}
		if err := s.addEvent(ctx, tx, version.Event{Skill: skill, Digest: digest, Action: t.Action, Status: t.To, By: by, At: at, Note: note}); err != nil {
			return err
		}
		out, err = scanVersion(tx.QueryRowContext(ctx, s.q(`SELECT `+versionColumns+` FROM versions WHERE tenant = ? AND skill = ? AND digest = ?`), s.tenant, skill, digest))
		return err
	})
	return out, err
}

// isUniqueViolation says whether err is a unique constraint's refusal, in either database.
func isUniqueViolation(err error) bool {
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "unique") || strings.Contains(m, "23505")
}

// scanVersion reads one row of versionColumns.
func scanVersion(row interface{ Scan(...any) error }) (version.Version, error) {
	var v version.Version
	var status, grant, diff string
	var created int64
	var updated sql.NullInt64
	if err := row.Scan(&v.Skill, &v.Digest, &v.Version, &status, &v.Source, &grant, &diff, &v.CreatedBy, &created, &v.UpdatedBy, &updated, &v.Note, &v.User); err != nil {
		return v, err
	}
	v.Status = version.Status(status)
	v.CreatedAt = time.Unix(0, created).UTC()
	if updated.Valid {
		v.UpdatedAt = time.Unix(0, updated.Int64).UTC()
	}
	if err := json.Unmarshal([]byte(grant), &v.Grant); err != nil {
		return v, fmt.Errorf("version %s of %s: its grant: %w", v.Digest, v.Skill, err)
	}
	if err := json.Unmarshal([]byte(diff), &v.Diff); err != nil {
		return v, fmt.Errorf("version %s of %s: its diff: %w", v.Digest, v.Skill, err)
	}
	if len(v.Diff) == 0 {
		v.Diff = nil
	}
	return v, nil
}
