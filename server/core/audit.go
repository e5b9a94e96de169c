package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
)

// Audit actions (docs/reference/flags.md, Audit).
const (
	actionCreate    = "create"
	actionReplace   = "replace"
	actionUpdate    = "update"
	actionDelete    = "delete"
	actionPromote   = "promote"
	actionArchive   = "archive"
	actionUnarchive = "unarchive"
)

// Sources of a flag write, its audit entry's metadata.source
// (docs/reference/flags.md, Audit).
const (
	SourceAPI           = "api"
	SourceSchedule      = "schedule"
	SourceChangeRequest = "change_request"
)

// auditFlag appends one entry to the environment's log in the transaction
// of the write it records, so an acknowledged write always has its entry,
// and the same change to the workspace audit trail (docs/audit.md): every
// flag write passes here, so none is missing from either. before and after
// are the flag in its API form; either may be nil. trailID is the trail
// entry's id when the write took it already (lockFlag), else 0.
func auditFlag(ctx context.Context, q *db.Queries, trail *audit.Trail, trailID int64, envID uuid.UUID, key, actor, action string, before, after *eval.Flag, metadata map[string]any) error {
	var b, a, m json.RawMessage
	var err error
	if before != nil {
		if b, err = json.Marshal(before); err != nil {
			return err
		}
	}
	if after != nil {
		if a, err = json.Marshal(after); err != nil {
			return err
		}
	}
	if metadata != nil {
		if m, err = json.Marshal(metadata); err != nil {
			return err
		}
	}
	c := audit.Change{Action: "flag.updated", Resource: audit.Resource{Type: audit.Flag, ID: key, Key: audit.Str(key)},
		EnvironmentID: audit.ID(envID)}
	// The environment log's finer actions (replace, promote, archive, ...)
	// are all updates in the trail; a write without a flag before it
	// created one (a POST, or a promotion into an environment without it).
	// The states go in as encoded for the log: encoded once, stored alike.
	switch {
	case after == nil:
		c.Action, c.Before = "flag.deleted", b
	case before == nil:
		c.Action, c.After = "flag.created", a
	default:
		c.Before, c.After = b, a
	}
	log := db.InsertAuditEntryParams{
		EnvironmentID: envID, FlagKey: key, ActorEmail: actor, Action: action,
		BeforeData: b, AfterData: a, Metadata: m,
	}
	if !trail.Enabled() {
		if err := q.InsertAuditEntry(ctx, log); err != nil {
			return fmt.Errorf("append audit entry: %w", err)
		}
		return nil
	}
	if trailID == 0 {
		if trailID, err = q.NextTrailID(ctx); err != nil {
			return fmt.Errorf("audit %s: take id: %w", c.Action, err)
		}
	}
	row, err := trail.RowFor(ctx, q, trailID, c)
	if err != nil {
		return err
	}
	if err := q.InsertFlagAuditEntries(ctx, db.InsertFlagAuditEntriesParams{
		EnvironmentID: &envID, FlagKey: key, ActorEmail: actor, Action: action,
		BeforeData: b, AfterData: a, Metadata: m,
		TrailID: row.ID, TrailAt: row.At, TrailAction: row.Action, TrailActorKind: row.ActorKind,
		TrailActorEmail: row.ActorEmail, TrailActorLabel: row.ActorLabel, TrailResourceType: row.ResourceType,
		TrailResourceID: row.ResourceID, TrailProjectID: row.ProjectID, TrailBody: row.Body, TrailMac: row.Mac,
	}); err != nil {
		return fmt.Errorf("append audit entries: %w", err)
	}
	return nil
}

// record appends c to the workspace audit trail in q's transaction, as a
// change in env: the entry names the environment and its project.
func record(ctx context.Context, q *db.Queries, trail *audit.Trail, env db.Environment, c audit.Change) error {
	c.ProjectID, c.EnvironmentID = audit.ID(env.ProjectID), audit.ID(env.ID)
	return trail.Record(ctx, q, c)
}

// recordInEnv is record for a write that holds only its environment's id;
// the trail knows the environment's project.
func recordInEnv(ctx context.Context, q *db.Queries, trail *audit.Trail, envID uuid.UUID, c audit.Change) error {
	c.EnvironmentID = audit.ID(envID)
	return trail.Record(ctx, q, c)
}

// sdkActorPrefix starts the actor name of an SDK key (auth.Principal.Actor).
const sdkActorPrefix = "sdk:"

// AuditQuery filters the audit log.
type AuditQuery struct {
	FlagKey *string
	Limit   *int32 // 1 to 500, default 50; clamped (docs/reference/flags.md, Audit)
	Offset  *int32 // default 0; negative counts as 0
}

// ListAudit returns an environment's audit entries, newest first.
func (s *Service) ListAudit(ctx context.Context, p *auth.Principal, envID uuid.UUID, aq AuditQuery) ([]db.AuditEntry, error) {
	q := db.New(s.pool)
	if _, err := access.Env(ctx, q, p, envID, access.Read); err != nil {
		return nil, err
	}
	limit := clamp(aq.Limit, 50, 1, 500)
	offset := clamp(aq.Offset, 0, 0, 1<<30)
	entries, err := q.ListAuditEntries(ctx, db.ListAuditEntriesParams{EnvironmentID: envID, FlagKey: aq.FlagKey, RowLimit: limit, RowOffset: offset})
	if err != nil {
		return nil, fmt.Errorf("list audit entries: %w", err)
	}
	return entries, nil
}

// clamp returns *v within [lo, hi], or def when v is nil.
func clamp(v *int32, def, lo, hi int32) int32 {
	if v == nil {
		return def
	}
	return min(max(*v, lo), hi)
}
