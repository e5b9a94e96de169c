package audit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
)

// Trail writes entries: every write path records its change through Record,
// inside the transaction of the change.
type Trail struct {
	key []byte
	now func() time.Time
	off bool // Disabled: records nothing
	// projects remembers each environment's project (uuid.UUID to
	// uuid.UUID), which never changes: an entry that names only its
	// environment costs no query for its project after the first.
	projects sync.Map
}

// New returns a Trail that MACs entries with key (KeyFrom). now is the
// clock of each entry's at; time.Now when nil.
func New(key []byte, now func() time.Time) *Trail {
	if now == nil {
		now = time.Now
	}
	return &Trail{key: key, now: now}
}

// Disabled returns a Trail that records nothing. It exists to measure what
// the trail costs a write (bench/audit); a server never runs with it.
func Disabled() *Trail { return &Trail{off: true, now: time.Now} }

// KeyFrom derives the trail's MAC key from a server secret (AUDIT_KEY, or
// SESSION_SECRET when that is unset), so that the key itself is stored
// nowhere and is not the secret that seals sessions.
func KeyFrom(secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("switchyard audit trail mac v1"))
	return m.Sum(nil)
}

// orDefault lets a nil Trail record with the key of an empty secret, so that
// a service built without one (in a test) still writes every entry.
func (t *Trail) orDefault() *Trail {
	if t == nil {
		return New(KeyFrom(""), nil)
	}
	return t
}

// Record appends c to the trail through q, which must be the transaction of
// the change: the entry commits, or is lost, with it. Its actor is c.Actor,
// else the context's (ActorFrom); its request the context's.
func (t *Trail) Record(ctx context.Context, q *db.Queries, c Change) error {
	if !t.Enabled() {
		return nil
	}
	id, err := q.NextTrailID(ctx)
	if err != nil {
		return fmt.Errorf("audit %s: take id: %w", c.Action, err)
	}
	row, err := t.RowFor(ctx, q, id, c)
	if err != nil {
		return err
	}
	if err := q.InsertTrailEntry(ctx, row); err != nil {
		return fmt.Errorf("audit %s: insert: %w", c.Action, err)
	}
	return nil
}

// Enabled reports whether t records entries: false only for Disabled.
func (t *Trail) Enabled() bool { return t == nil || !t.off }

// RowFor builds the row Record would insert for c as entry id: its actor is
// c.Actor, else the context's (ActorFrom); its request the context's. It
// is for a write that inserts the row in a statement of its own, with an
// id it took exactly as NextTrailID takes one (the writers' shared lock
// first, then the sequence), to save round trips.
func (t *Trail) RowFor(ctx context.Context, q *db.Queries, id int64, c Change) (db.InsertTrailEntryParams, error) {
	t = t.orDefault()
	var err error
	actor := ActorFrom(ctx)
	if c.Actor != nil {
		actor = *c.Actor
	}
	if c.EnvironmentID != nil && c.ProjectID == nil {
		if c.ProjectID, err = t.projectOf(ctx, q, *c.EnvironmentID); err != nil {
			return db.InsertTrailEntryParams{}, fmt.Errorf("audit %s: %w", c.Action, err)
		}
	}
	return t.Row(id, t.now(), actor, RequestFrom(ctx), c)
}

// Row builds the stored row of entry id: its canonical bytes, their MAC and
// the filter columns. Record writes what it returns; loading tools may too.
func (t *Trail) Row(id int64, at time.Time, actor Actor, req Request, c Change) (db.InsertTrailEntryParams, error) {
	t = t.orDefault()
	before, err := encodeState(c.Before)
	if err != nil {
		return db.InsertTrailEntryParams{}, fmt.Errorf("audit %s: encode before: %w", c.Action, err)
	}
	after, err := encodeState(c.After)
	if err != nil {
		return db.InsertTrailEntryParams{}, fmt.Errorf("audit %s: encode after: %w", c.Action, err)
	}
	if actor.Email != nil {
		actor.Email = Str(strings.ToLower(*actor.Email))
	}
	e := Entry{
		ID: id, At: at.UTC().Truncate(time.Microsecond), Action: c.Action, Actor: actor,
		Resource: c.Resource, ProjectID: c.ProjectID, EnvironmentID: c.EnvironmentID,
		Before: before, After: after, Request: req,
	}
	body, err := json.Marshal(e)
	if err != nil {
		return db.InsertTrailEntryParams{}, fmt.Errorf("audit %s: encode: %w", c.Action, err)
	}
	row := db.InsertTrailEntryParams{
		ID: id, At: e.At, Action: e.Action, ActorKind: actor.Kind, ActorEmail: actor.Email, ActorLabel: actor.Label,
		ResourceType: c.Resource.Type, ResourceID: c.Resource.ID, ProjectID: c.ProjectID, EnvironmentID: c.EnvironmentID,
		Body: body,
	}
	row.Mac = t.mac(rowColumns{
		id: id, at: e.At, action: e.Action, actorKind: actor.Kind, actorEmail: actor.Email, actorLabel: actor.Label,
		resourceType: row.ResourceType, resourceID: row.ResourceID, projectID: c.ProjectID, environmentID: c.EnvironmentID, body: body,
	})
	return row, nil
}

// projectOf returns the project of environment envID.
func (t *Trail) projectOf(ctx context.Context, q *db.Queries, envID uuid.UUID) (*uuid.UUID, error) {
	if p, ok := t.projects.Load(envID); ok {
		id := p.(uuid.UUID)
		return &id, nil
	}
	id, err := q.GetTrailEnvironmentProject(ctx, envID)
	if err != nil {
		return nil, fmt.Errorf("read the project of environment %s: %w", envID, err)
	}
	t.projects.Store(envID, id)
	return &id, nil
}

// encodeState encodes a before or after state; a nil one, or one that
// encodes as null, is none.
func encodeState(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		// Already encoded by encoding/json (Change), so compact and valid.
		if len(raw) == 0 || string(raw) == "null" {
			return nil, nil
		}
		return raw, nil
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil, err
	}
	return b, nil
}

// rowColumns are the stored columns a MAC covers: the body, and the copies
// of its fields that filters read, so that neither can be changed by hand
// without verification noticing.
type rowColumns struct {
	id                     int64
	at                     time.Time
	action, actorKind      string
	actorEmail, actorLabel *string
	resourceType           string
	resourceID             string
	projectID              *uuid.UUID
	environmentID          *uuid.UUID
	body                   []byte
}

func columnsOf(r db.ListTrailForVerifyRow) rowColumns {
	return rowColumns{
		id: r.ID, at: r.At, action: r.Action, actorKind: r.ActorKind, actorEmail: r.ActorEmail, actorLabel: r.ActorLabel,
		resourceType: r.ResourceType, resourceID: r.ResourceID, projectID: r.ProjectID, environmentID: r.EnvironmentID, body: r.Body,
	}
}

// mac is HMAC-SHA256 under the trail's key of the row's columns, each
// length-prefixed so that no two rows encode alike.
func (t *Trail) mac(c rowColumns) []byte {
	return macWith(hmac.New(sha256.New, t.key), c, nil)
}

// macWith computes the MAC with m, a reset HMAC under the trail's key, and
// appends it to dst: verification reuses one m for every row.
func macWith(m hash.Hash, c rowColumns, dst []byte) []byte {
	var n [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		m.Write(n[:])
		m.Write(b)
	}
	opt := func(s *string) {
		if s == nil {
			m.Write([]byte{0})
			return
		}
		m.Write([]byte{1})
		field([]byte(*s))
	}
	optID := func(id *uuid.UUID) {
		if id == nil {
			m.Write([]byte{0})
			return
		}
		m.Write([]byte{1})
		m.Write(id[:])
	}
	binary.BigEndian.PutUint64(n[:], uint64(c.id))
	m.Write(n[:])
	binary.BigEndian.PutUint64(n[:], uint64(c.at.UnixMicro()))
	m.Write(n[:])
	field([]byte(c.action))
	field([]byte(c.actorKind))
	opt(c.actorEmail)
	opt(c.actorLabel)
	field([]byte(c.resourceType))
	field([]byte(c.resourceID))
	optID(c.projectID)
	optID(c.environmentID)
	field(c.body)
	return m.Sum(dst)
}

// chain is the hash of an entry: SHA-256 over the previous entry's hash
// (empty for the first) and the entry's canonical bytes.
func chain(prev, body []byte) []byte {
	h := sha256.New()
	h.Write(prev)
	h.Write(body)
	return h.Sum(nil)
}
