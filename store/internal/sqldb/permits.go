package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/skillbox-dev/skillbox/permit"
)

// The permits people made (permit.Store), each statement bound to s's tenant.

const permitColumns = `id, skill, digest, caller, kind, target, access, at, until_at, by_who, run_id, request_id, revoked_by`

// AddPermit keeps p.
func (s *DB) AddPermit(ctx context.Context, p permit.Permit) error {
	if err := s.check(); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO permits (tenant, `+permitColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		s.tenant, p.ID, p.Skill, p.Digest, p.Caller, p.Kind, p.Target, p.Access, p.At.UnixNano(), p.Until.UnixNano(), p.By, p.RunID, p.RequestID, p.RevokedBy)
	if err != nil {
		return s.named(fmt.Errorf("add permit %s: %s %s: %w", p.ID, s.dialect.Name, s.where, err))
	}
	return nil
}

// FindPermit returns the permit in force that covers q and lasts longest.
func (s *DB) FindPermit(ctx context.Context, q permit.Query) (permit.Permit, error) {
	if err := s.check(); err != nil {
		return permit.Permit{}, err
	}
	at := q.At.UnixNano()
	row := s.db.QueryRowContext(ctx, s.q(`SELECT `+permitColumns+` FROM permits
		WHERE tenant = ? AND skill = ? AND digest = ? AND kind = ? AND target = ? AND access = ?
		AND (caller = '' OR caller = ?) AND at <= ? AND until_at > ?
		ORDER BY until_at DESC LIMIT 1`), s.tenant, q.Skill, q.Digest, q.Kind, q.Target, q.Access, q.Caller, at, at)
	p, err := scanPermit(row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return permit.Permit{}, permit.ErrNotFound
	case err != nil:
		return permit.Permit{}, fmt.Errorf("find permit: %s %s: %w", s.dialect.Name, s.where, err)
	}
	return p, nil
}

// ListPermits returns the permits in force at at, newest first.
func (s *DB) ListPermits(ctx context.Context, at time.Time, limit int) ([]permit.Permit, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if limit < 1 || limit > permit.MaxList {
		return nil, fmt.Errorf("list permits: limit %d: ask for 1 to %d", limit, permit.MaxList)
	}
	n := at.UnixNano()
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+permitColumns+` FROM permits
		WHERE tenant = ? AND at <= ? AND until_at > ? ORDER BY at DESC, id LIMIT ?`), s.tenant, n, n, limit)
	if err != nil {
		return nil, fmt.Errorf("list permits: %s %s: %w", s.dialect.Name, s.where, err)
	}
	defer rows.Close()
	var out []permit.Permit
	for rows.Next() {
		p, err := scanPermit(rows)
		if err != nil {
			return nil, fmt.Errorf("list permits: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// RevokePermit ends permit id at at, by who.
func (s *DB) RevokePermit(ctx context.Context, id, who string, at time.Time) error {
	if err := s.check(); err != nil {
		return err
	}
	n := at.UnixNano()
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE permits SET until_at = ?, revoked_by = ? WHERE tenant = ? AND id = ? AND until_at > ?`),
		n, who, s.tenant, id, n)
	if err != nil {
		return s.named(fmt.Errorf("revoke permit %s: %s %s: %w", id, s.dialect.Name, s.where, err))
	}
	if k, err := res.RowsAffected(); err == nil && k == 0 {
		return permit.ErrNotFound
	}
	return nil
}

func scanPermit(r interface{ Scan(...any) error }) (permit.Permit, error) {
	var p permit.Permit
	var at, until int64
	if err := r.Scan(&p.ID, &p.Skill, &p.Digest, &p.Caller, &p.Kind, &p.Target, &p.Access, &at, &until, &p.By, &p.RunID, &p.RequestID, &p.RevokedBy); err != nil {
		return p, err
	}
	p.At, p.Until = time.Unix(0, at).UTC(), time.Unix(0, until).UTC()
	return p, nil
}
