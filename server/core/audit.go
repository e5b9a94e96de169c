package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/access"
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

// auditFlag appends one entry in the transaction of the write it records, so an
// acknowledged write always has its entry. before and after are the flag in
// its API form; either may be nil.
func auditFlag(ctx context.Context, q *db.Queries, envID uuid.UUID, key, actor, action string, before, after *eval.Flag, metadata map[string]any) error {
	enc := func(v any) (json.RawMessage, error) {
		if v == nil {
			return nil, nil
		}
		return json.Marshal(v)
	}
	var b, a, m json.RawMessage
	var err error
	if before != nil {
		if b, err = enc(*before); err != nil {
			return err
		}
	}
	if after != nil {
		if a, err = enc(*after); err != nil {
			return err
		}
	}
	if metadata != nil {
		if m, err = enc(metadata); err != nil {
			return err
		}
	}
	if err := q.InsertAuditEntry(ctx, db.InsertAuditEntryParams{
		EnvironmentID: envID, FlagKey: key, ActorEmail: actor, Action: action,
		BeforeData: b, AfterData: a, Metadata: m,
	}); err != nil {
		return fmt.Errorf("append audit entry: %w", err)
	}
	return nil
}

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
