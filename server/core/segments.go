package core

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/sdkgo/eval/check"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/bus"
	"github.com/switchyard/switchyard/server/store"
)

var errSegmentNotFound = apperr.E(apperr.NotFound, "segment not found")

// SegmentInput creates a segment, or (with nil fields left alone) patches one.
type SegmentInput struct {
	Key         string
	Name        *string
	Description *string // a patch clears the description with ClearDescription
	Rules       *[]eval.Rule

	ClearDescription bool
}

// ListSegments returns an environment's segments ordered by key.
func (s *Service) ListSegments(ctx context.Context, p *auth.Principal, envID uuid.UUID) ([]db.Segment, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return nil, err
	}
	return q.ListSegments(ctx, envID)
}

// GetSegment returns one segment.
func (s *Service) GetSegment(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string) (db.Segment, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return db.Segment{}, err
	}
	seg, err := q.GetSegment(ctx, db.GetSegmentParams{EnvironmentID: envID, Key: key})
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Segment{}, errSegmentNotFound
	}
	return seg, err
}

// CreateSegment creates a segment; refused while the environment requires
// approval (docs/reference/flags.md, Approval requirement).
func (s *Service) CreateSegment(ctx context.Context, p *auth.Principal, envID uuid.UUID, in SegmentInput) (db.Segment, error) {
	name, rules, err := validateSegment(in.Key, in.Name, in.Rules)
	if err != nil {
		return db.Segment{}, err
	}
	seg, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.Segment, error) {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return db.Segment{}, err
		}
		if env.RequireApproval {
			return db.Segment{}, errApprovalRequired("writing segments")
		}
		seg, err := q.InsertSegment(ctx, db.InsertSegmentParams{EnvironmentID: env.ID, Key: in.Key, Name: name, Description: in.Description, Rules: rules})
		if err != nil {
			return db.Segment{}, err
		}
		return seg, s.recordSegment(ctx, q, env, "segment.created", nil, &seg)
	})
	return seg, store.AdaptError(err)
}

// PatchSegment changes a segment's name, description or rules, and
// re-broadcasts every flag that references it (docs/reference/flags.md,
// Segments).
func (s *Service) PatchSegment(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string, in SegmentInput) (db.Segment, error) {
	var events []bus.Event
	seg, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (db.Segment, error) {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return db.Segment{}, err
		}
		cur, err := q.LockSegment(ctx, db.LockSegmentParams{EnvironmentID: env.ID, Key: key})
		if errors.Is(err, pgx.ErrNoRows) {
			return db.Segment{}, errSegmentNotFound
		}
		if err != nil {
			return db.Segment{}, err
		}
		if env.RequireApproval {
			return db.Segment{}, errApprovalRequired("writing segments")
		}
		name := &cur.Name
		if in.Name != nil {
			name = in.Name
		}
		var curRules []eval.Rule
		if err := json.Unmarshal(cur.Rules, &curRules); err != nil {
			return db.Segment{}, err
		}
		rulesIn := &curRules
		if in.Rules != nil {
			rulesIn = in.Rules
		}
		checkedName, rules, err := validateSegment(key, name, rulesIn)
		if err != nil {
			return db.Segment{}, err
		}
		desc := cur.Description
		if in.Description != nil || in.ClearDescription {
			desc = in.Description
		}
		updated, err := q.UpdateSegment(ctx, db.UpdateSegmentParams{ID: cur.ID, Name: checkedName, Description: desc, Rules: rules})
		if err != nil {
			return db.Segment{}, err
		}
		if err := s.recordSegment(ctx, q, env, "segment.updated", &cur, &updated); err != nil {
			return db.Segment{}, err
		}
		events, err = bumpReferencingFlags(ctx, q, env.ID, key)
		return updated, err
	})
	if err != nil {
		return db.Segment{}, store.AdaptError(err)
	}
	s.publish(ctx, events...)
	return seg, nil
}

// DeleteSegment deletes a segment and re-broadcasts every flag that
// referenced it, now without the segment's rules.
func (s *Service) DeleteSegment(ctx context.Context, p *auth.Principal, envID uuid.UUID, key string) error {
	var events []bus.Event
	err := store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		env, err := access.Env(ctx, q, p, envID, access.Write)
		if err != nil {
			return err
		}
		cur, err := q.LockSegment(ctx, db.LockSegmentParams{EnvironmentID: env.ID, Key: key})
		if errors.Is(err, pgx.ErrNoRows) {
			return errSegmentNotFound
		}
		if err != nil {
			return err
		}
		if env.RequireApproval {
			return errApprovalRequired("writing segments")
		}
		if err := q.DeleteSegment(ctx, cur.ID); err != nil {
			return err
		}
		if err := s.recordSegment(ctx, q, env, "segment.deleted", &cur, nil); err != nil {
			return err
		}
		events, err = bumpReferencingFlags(ctx, q, env.ID, key)
		return err
	})
	if err != nil {
		return store.AdaptError(err)
	}
	s.publish(ctx, events...)
	return nil
}

// recordSegment appends a segment's change to the audit trail: the
// resource's id is the segment's key, its states the segment as the API
// shows it (either nil).
func (s *Service) recordSegment(ctx context.Context, q *db.Queries, env db.Environment, action string, before, after *db.Segment) error {
	seg := cmp.Or(after, before)
	return record(ctx, q, s.trail, env, audit.Change{
		Action:   action,
		Resource: audit.Resource{Type: audit.Segment, ID: seg.Key, Key: audit.Str(seg.Key), Name: audit.Str(seg.Name)},
		Before:   segmentData(before), After: segmentData(after),
	})
}

// segmentData is a segment as the API shows it; none for nil.
func segmentData(seg *db.Segment) any {
	if seg == nil {
		return nil
	}
	return map[string]any{
		"id": seg.ID, "environment_id": seg.EnvironmentID, "key": seg.Key, "name": seg.Name,
		"description": seg.Description, "rules": seg.Rules, "created_at": seg.CreatedAt,
	}
}

// bumpReferencingFlags gives every flag that references a segment a new
// version, in the segment write's transaction, and returns their upserts:
// SDKs ignore updates that are not newer than what they hold.
func bumpReferencingFlags(ctx context.Context, q *db.Queries, envID uuid.UUID, segmentKey string) ([]bus.Event, error) {
	rows, err := q.BumpFlagsReferencingSegment(ctx, db.BumpFlagsReferencingSegmentParams{EnvironmentID: envID, SegmentKey: segmentKey})
	if err != nil {
		return nil, fmt.Errorf("re-version flags of segment %q: %w", segmentKey, err)
	}
	events := make([]bus.Event, 0, len(rows))
	for _, r := range rows {
		events = append(events, bus.Event{Op: bus.OpUpsert, EnvID: envID, Key: r.Key, Version: r.Version})
	}
	return events, nil
}

// validateSegment checks a segment's key, name and rules (check.Segment)
// and returns the trimmed name and the rules as stored.
func validateSegment(key string, name *string, rules *[]eval.Rule) (string, []byte, error) {
	n := ""
	if name != nil {
		n = strings.TrimSpace(*name)
	}
	var rs []eval.Rule
	if rules != nil {
		rs = *rules
	}
	if rs == nil {
		rs = []eval.Rule{}
	}
	if err := problems(check.Segment(key, n, rs)); err != nil {
		return "", nil, err
	}
	for i, r := range rs {
		rs[i].Variants = nil // variants: [] is none and comes back absent
		rs[i].Variant = nullToNil(r.Variant)
		if rs[i].Values == nil {
			rs[i].Values = []string{}
		}
	}
	raw, err := json.Marshal(rs)
	return n, raw, err
}
