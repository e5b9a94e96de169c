package core

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/sdkgo/eval"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
)

// Diff statuses (docs/reference/flags.md, Diff).
const (
	DiffOnlyInFrom = "only_in_from"
	DiffOnlyInTo   = "only_in_to"
	DiffDifferent  = "different"
	DiffSame       = "same"
)

// DiffEntry compares one flag key across two environments.
type DiffEntry struct {
	Key           string
	Status        string
	From, To      *eval.Flag
	ChangedFields []string
}

// notCompared are the fields the diff leaves out (docs/reference/flags.md,
// Diff).
var notCompared = map[string]bool{"environment_id": true, "version": true, "created_at": true, "updated_at": true}

// DiffFlags compares the flags of two environments of a project, ordered by
// key.
func (s *Service) DiffFlags(ctx context.Context, p *auth.Principal, projectID, fromID, toID uuid.UUID) ([]DiffEntry, error) {
	q := db.New(s.pool)
	if _, err := access.Project(ctx, q, p, projectID, access.Read); err != nil {
		return nil, err
	}
	sides := make([]map[string]eval.Flag, 2)
	for i, id := range []uuid.UUID{fromID, toID} {
		env, err := q.GetEnvironment(ctx, id)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && env.ProjectID != projectID {
			return nil, apperr.E(apperr.NotFound, "environment not found in this project")
		}
		if err != nil {
			return nil, err
		}
		rows, err := q.ListFlags(ctx, db.ListFlagsParams{EnvironmentID: id})
		if err != nil {
			return nil, err
		}
		sides[i] = make(map[string]eval.Flag, len(rows))
		for _, r := range rows {
			f, err := flagFromRow(r)
			if err != nil {
				return nil, err
			}
			sides[i][f.Key] = f
		}
	}
	keys := make([]string, 0, len(sides[0])+len(sides[1]))
	for _, side := range sides {
		for k := range side {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	out := make([]DiffEntry, 0, len(keys))
	for _, k := range keys {
		e := DiffEntry{Key: k, ChangedFields: []string{}}
		from, inFrom := sides[0][k]
		to, inTo := sides[1][k]
		if inFrom {
			e.From = &from
		}
		if inTo {
			e.To = &to
		}
		switch {
		case !inTo:
			e.Status = DiffOnlyInFrom
		case !inFrom:
			e.Status = DiffOnlyInTo
		default:
			e.ChangedFields = changedFields(from, to)
			e.Status = DiffSame
			if len(e.ChangedFields) > 0 {
				e.Status = DiffDifferent
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// changedFields lists the fields whose JSON values differ, sorted.
func changedFields(a, b eval.Flag) []string {
	fa, fb := jsonFields(a), jsonFields(b)
	var changed []string
	for name, va := range fa {
		if !notCompared[name] && !reflect.DeepEqual(va, fb[name]) {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	if changed == nil {
		changed = []string{}
	}
	return changed
}

func jsonFields(f eval.Flag) map[string]any {
	raw, _ := json.Marshal(f)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}
