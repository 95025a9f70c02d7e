package store

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// cursor is where a page of ListRuns ended: the start time and id of its last run. Clients see
// it base64url-encoded and treat it as opaque; the encoding may change between versions.
type cursor struct {
	StartedNs int64  `json:"t"`
	ID        string `json:"i"`
}

// EncodeCursor is the cursor of the page after a page that ended with last.
func EncodeCursor(last Run) string {
	b, _ := json.Marshal(cursor{StartedNs: last.StartedAt.UnixNano(), ID: last.ID})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor EncodeCursor made; anything else is an error that is ErrBadQuery.
func DecodeCursor(s string) (startedAt time.Time, id string, err error) {
	if len(s) > 256 {
		return time.Time{}, "", fmt.Errorf("%w: cursor: longer than any this server makes", ErrBadQuery)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("%w: cursor: not one this server made (pass next_cursor back unchanged)", ErrBadQuery)
	}
	var c cursor
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.ID == "" {
		return time.Time{}, "", fmt.Errorf("%w: cursor: not one this server made (pass next_cursor back unchanged)", ErrBadQuery)
	}
	return time.Unix(0, c.StartedNs).UTC(), c.ID, nil
}

// Check validates q and returns it with its defaults: what every driver's ListRuns does first.
func (q Query) Check() (Query, error) {
	switch {
	case q.Limit == 0:
		q.Limit = DefaultLimit
	case q.Limit < 0 || q.Limit > MaxLimit:
		return q, fmt.Errorf("%w: limit %d: ask for 1 to %d runs a page", ErrBadQuery, q.Limit, MaxLimit)
	}
	if q.Status != "" && !q.Status.Valid() {
		return q, fmt.Errorf("%w: status %q: use queued, running, succeeded, failed or interrupted", ErrBadQuery, q.Status)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return q, fmt.Errorf("%w: until %s is not after since %s: no run starts in between", ErrBadQuery,
			q.Until.Format(time.RFC3339Nano), q.Since.Format(time.RFC3339Nano))
	}
	if q.Cursor != "" {
		if _, _, err := DecodeCursor(q.Cursor); err != nil {
			return q, err
		}
	}
	return q, nil
}
