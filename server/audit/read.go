package audit

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// Service answers the trail's reads: the list, the export and verification.
type Service struct {
	pool  *pgxpool.Pool
	trail *Trail
}

// NewService returns the trail's reads on pool; trail verifies the MACs.
func NewService(pool *pgxpool.Pool, trail *Trail) *Service {
	return &Service{pool: pool, trail: trail.orDefault()}
}

// Filter selects entries (docs/audit.md, Reading the trail).
type Filter struct {
	ProjectID     *uuid.UUID
	EnvironmentID *uuid.UUID
	Actor         *string // an email, or a token's (or SDK key's, SCIM token's) prefix
	ResourceType  *string
	ResourceID    *string
	Action        *string // exact, or "<prefix>.*"
	From, To      *time.Time
}

// Page is one page of the list, newest first.
type Page struct {
	Items      [][]byte // each entry's API JSON (Encode)
	NextCursor *string
}

// List returns a page of entries matching f, newest first, from cursor
// (the previous page's NextCursor); limit is clamped to 1..500, default 50.
func (s *Service) List(ctx context.Context, p *auth.Principal, f Filter, cursor *string, limit *int32) (Page, error) {
	scope, err := s.scope(ctx, p, f)
	if err != nil {
		return Page{}, err
	}
	var at time.Time
	var after int64
	if cursor != nil {
		var ok bool
		if at, after, ok = parseCursor(*cursor); !ok {
			return Page{}, apperr.Field("cursor", "must be a next_cursor this route returned")
		}
	}
	n := int32(50)
	if limit != nil {
		n = min(max(*limit, 1), 500)
	}
	params := listParams(f, scope)
	rows, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) ([]db.ListTrailEntriesRow, error) {
		if err := q.PlanTrailReadsCustom(ctx); err != nil {
			return nil, err
		}
		return q.ListTrailEntries(ctx, db.ListTrailEntriesParams{
			Paged: cursor != nil, CursorAt: at, CursorID: after, Restricted: params.Restricted, ProjectIds: params.ProjectIds, ProjectID: params.ProjectID,
			EnvironmentID: params.EnvironmentID, ActorEmail: params.ActorEmail, ActorLabel: params.ActorLabel,
			ResourceType: params.ResourceType, ResourceID: params.ResourceID, Action: params.Action,
			ActionPrefix: params.ActionPrefix, FromAt: params.FromAt, ToAt: params.ToAt, RowLimit: n + 1,
		})
	})
	if err != nil {
		return Page{}, fmt.Errorf("list audit trail: %w", err)
	}
	page := Page{Items: make([][]byte, 0, min(len(rows), int(n)))}
	for i, r := range rows {
		if i == int(n) {
			c := strconv.FormatInt(rows[i-1].At.UnixMicro(), 10) + "." + strconv.FormatInt(rows[i-1].ID, 10)
			page.NextCursor = &c
			break
		}
		page.Items = append(page.Items, Encode(nil, r.Body, r.Hash))
	}
	return page, nil
}

// parseCursor reads a next_cursor: the last entry's at (Unix microseconds)
// and id.
func parseCursor(c string) (time.Time, int64, bool) {
	micros, id, ok := strings.Cut(c, ".")
	if !ok {
		return time.Time{}, 0, false
	}
	m, err1 := strconv.ParseInt(micros, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || n < 1 {
		return time.Time{}, 0, false
	}
	return time.UnixMicro(m).UTC(), n, true
}

// Export is the entries of an export, read in batches in id order.
type Export struct {
	pool   *pgxpool.Pool
	params db.ListTrailEntriesAscendingParams
}

// Each calls fn with each batch of entries' API JSON, oldest first.
func (x *Export) Each(ctx context.Context, fn func([][]byte) error) error {
	params := x.params
	params.RowLimit = 1000
	var buf [][]byte
	for {
		rows, err := store.WithTxV(ctx, x.pool, func(q *db.Queries) ([]db.ListTrailEntriesAscendingRow, error) {
			if err := q.PlanTrailReadsCustom(ctx); err != nil {
				return nil, err
			}
			return q.ListTrailEntriesAscending(ctx, params)
		})
		if err != nil {
			return fmt.Errorf("export audit trail after %d: %w", params.AfterID, err)
		}
		if len(rows) == 0 {
			return nil
		}
		buf = buf[:0]
		for _, r := range rows {
			buf = append(buf, Encode(nil, r.Body, r.Hash))
		}
		if err := fn(buf); err != nil {
			return err
		}
		params.AfterID = rows[len(rows)-1].ID
	}
}

// Export prepares the export of every entry matching f, in id order. The
// same readers as List; everything that can refuse it happens here.
func (s *Service) Export(ctx context.Context, p *auth.Principal, f Filter) (*Export, error) {
	scope, err := s.scope(ctx, p, f)
	if err != nil {
		return nil, err
	}
	return &Export{pool: s.pool, params: listParams(f, scope)}, nil
}

// Verify recomputes the sealed chain over [from, to). Workspace admins only.
func (s *Service) Verify(ctx context.Context, p *auth.Principal, from, to *time.Time) (Verification, error) {
	if err := access.RequireWorkspaceAdmin(p, access.AdminRead); err != nil {
		return Verification{}, err
	}
	return s.trail.Verify(ctx, s.pool, from, to)
}

// scope is what a reader may see: nil for everything (a workspace admin),
// else the projects they administer (docs/audit.md, Who may read it).
func (s *Service) scope(ctx context.Context, p *auth.Principal, f Filter) ([]uuid.UUID, error) {
	if err := access.RequireUser(p); err != nil {
		return nil, err
	}
	if p.WorkspaceAdmin() {
		return nil, nil
	}
	projects, err := db.New(s.pool).ListAdminProjectIDs(ctx, p.UserID)
	if err != nil {
		return nil, fmt.Errorf("list the projects %d administers: %w", p.UserID, err)
	}
	if len(projects) == 0 {
		return nil, apperr.E(apperr.Forbidden, "only workspace admins and project admins may read the audit trail")
	}
	if f.ProjectID != nil && !contains(projects, *f.ProjectID) {
		return nil, apperr.E(apperr.Forbidden, "you are not an admin of this project")
	}
	return projects, nil
}

func contains(ids []uuid.UUID, id uuid.UUID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// listParams turns a filter and a scope into the ascending query's
// parameters (the list's are the same fields).
func listParams(f Filter, scope []uuid.UUID) db.ListTrailEntriesAscendingParams {
	p := db.ListTrailEntriesAscendingParams{
		Restricted: scope != nil, ProjectIds: scope, ProjectID: f.ProjectID, EnvironmentID: f.EnvironmentID,
		ResourceType: f.ResourceType, ResourceID: f.ResourceID, FromAt: f.From, ToAt: f.To,
	}
	if p.ProjectIds == nil {
		p.ProjectIds = []uuid.UUID{}
	}
	if f.Actor != nil {
		if strings.Contains(*f.Actor, "@") {
			p.ActorEmail = Str(strings.ToLower(*f.Actor))
		} else {
			p.ActorLabel = f.Actor
		}
	}
	if f.Action != nil {
		if prefix, ok := strings.CutSuffix(*f.Action, "*"); ok {
			p.ActionPrefix = &prefix
		} else {
			p.Action = f.Action
		}
	}
	if p.ActionPrefix != nil {
		escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(*p.ActionPrefix)
		p.ActionPrefix = &escaped
	}
	return p
}

// Encode appends an entry's API JSON to dst: its stored canonical bytes with
// the hash (hex, or null before it is sealed) as the last field.
func Encode(dst, body, hash []byte) []byte {
	dst = append(dst, body[:len(body)-1]...)
	if hash == nil {
		return append(dst, `,"hash":null}`...)
	}
	dst = append(dst, `,"hash":"`...)
	dst = hex.AppendEncode(dst, hash)
	return append(dst, `"}`...)
}

// Prune removes the sealed entries older than cutoff, oldest first and
// without a gap (AUDIT_RETENTION_DAYS), keeping the last removed entry's
// hash as the anchor the first remaining one chains from, and records that
// it did. It returns how many it removed.
func (t *Trail) Prune(ctx context.Context, pool *pgxpool.Pool, cutoff time.Time) (int64, error) {
	return store.WithTxV(ctx, pool, func(q *db.Queries) (int64, error) {
		cut, err := q.GetTrailRetentionCut(ctx, cutoff)
		if err != nil || cut == 0 {
			return 0, err
		}
		if err := q.SetTrailAnchor(ctx, cut); err != nil {
			return 0, fmt.Errorf("anchor the trail at %d: %w", cut, err)
		}
		if err := q.AllowTrailRetention(ctx); err != nil {
			return 0, err
		}
		if err := q.DeleteTrailHashesThrough(ctx, cut); err != nil {
			return 0, fmt.Errorf("remove trail hashes through %d: %w", cut, err)
		}
		n, err := q.DeleteTrailThrough(ctx, cut)
		if err != nil {
			return 0, fmt.Errorf("remove trail entries through %d: %w", cut, err)
		}
		label := "retention"
		err = t.Record(ctx, q, Change{
			Action: "workspace.updated", Resource: Resource{Type: Workspace, ID: "workspace"},
			After: map[string]any{"audit_entries_removed": n, "removed_through_id": cut, "older_than": cutoff.UTC()},
			Actor: &Actor{Kind: ActorSystem, Label: &label},
		})
		return n, err
	})
}
