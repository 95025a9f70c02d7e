package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/skillbox-dev/skillbox/version"
)

var (
	_ version.Feed     = (*DB)(nil)
	_ version.Notifier = (*DB)(nil)
)

// lockVersions serialises, in a PostgreSQL store, the transactions that record or move
// versions (see Dialect.LockVersions).
func (s *DB) lockVersions(ctx context.Context, tx *sql.Tx) error {
	if s.dialect.LockVersions == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, s.dialect.LockVersions)
	return err
}

// addEvent appends e, of s's tenant, to the versions' events, in tx.
func (s *DB) addEvent(ctx context.Context, tx *sql.Tx, e version.Event) error {
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO version_events (tenant, skill, digest, action, status, actor, at, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		s.tenant, e.Skill, e.Digest, e.Action, string(e.Status), e.By, e.At.UnixNano(), e.Note)
	if err == nil && s.dialect.NotifyVersions != "" {
		_, err = tx.ExecContext(ctx, s.dialect.NotifyVersions)
	}
	return err
}

// VersionNotes says when another process, or this one, changed the versions of the database
// (see version.Notifier): nil when the dialect cannot tell, and the runtime polls.
func (s *DB) VersionNotes(ctx context.Context) <-chan struct{} {
	if s.dialect.Notes == nil {
		return nil
	}
	return s.dialect.Notes.Subscribe(ctx)
}

// Changes returns the versions of s's tenant changed after since, as they are now, in the
// order of their changes.
func (s *DB) Changes(ctx context.Context, since int64, limit int) ([]version.Version, int64, error) {
	if err := s.check(); err != nil {
		return nil, since, err
	}
	if limit < 1 || limit > version.MaxQuery {
		return nil, since, fmt.Errorf("version changes: limit %d: ask for 1 to %d", limit, version.MaxQuery)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT e.seq, v.skill, v.digest, v.version, v.status, v.source, v.grant_json, v.diff,
		v.created_by, v.created_at, v.updated_by, v.updated_at, v.note, v.owner
		FROM version_events e JOIN versions v ON v.tenant = e.tenant AND v.skill = e.skill AND v.digest = e.digest
		WHERE e.tenant = ? AND e.seq > ? ORDER BY e.seq LIMIT ?`), s.tenant, since, limit)
	if err != nil {
		return nil, since, fmt.Errorf("version changes: %s %s: %w", s.dialect.Name, s.where, err)
	}
	defer rows.Close()
	var out []version.Version
	last := since
	for rows.Next() {
		var seq int64
		v, err := scanVersion(prefixed{rows, &seq})
		if err != nil {
			return nil, since, fmt.Errorf("version changes: %w", err)
		}
		out, last = append(out, v), seq
	}
	if err := rows.Err(); err != nil {
		return nil, since, fmt.Errorf("version changes: %s %s: %w", s.dialect.Name, s.where, err)
	}
	return out, last, nil
}

// prefixed scans one column into first, then the rest as scanVersion asks.
type prefixed struct {
	rows  *sql.Rows
	first *int64
}

func (p prefixed) Scan(dest ...any) error { return p.rows.Scan(append([]any{p.first}, dest...)...) }

// Events returns the events of skill's version at digest, oldest first.
func (s *DB) Events(ctx context.Context, skill, digest string, limit int) ([]version.Event, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if limit < 1 || limit > version.MaxQuery {
		return nil, fmt.Errorf("version events: limit %d: ask for 1 to %d", limit, version.MaxQuery)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT seq, action, status, actor, at, note FROM version_events
		WHERE tenant = ? AND skill = ? AND digest = ? ORDER BY seq LIMIT ?`), s.tenant, skill, digest, limit)
	if err != nil {
		return nil, fmt.Errorf("events of %s version %s: %s %s: %w", skill, digest, s.dialect.Name, s.where, err)
	}
	defer rows.Close()
	var out []version.Event
	for rows.Next() {
		e := version.Event{Skill: skill, Digest: digest}
		var status string
		var at int64
		if err := rows.Scan(&e.Seq, &e.Action, &status, &e.By, &at, &e.Note); err != nil {
			return nil, fmt.Errorf("events of %s version %s: %w", skill, digest, err)
		}
		e.Status, e.At = version.Status(status), time.Unix(0, at).UTC()
		out = append(out, e)
	}
	return out, rows.Err()
}
