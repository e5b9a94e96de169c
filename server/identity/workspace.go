package identity

import (
	"context"
	"fmt"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/store"
)

// WorkspaceInfo is the public view of the workspace (GET /api/auth/workspace).
type WorkspaceInfo struct {
	Name string
	// SetupComplete is true exactly when at least one user exists
	// (docs/reference/identity.md, Setup wizard); until then POST
	// /api/auth/setup is open.
	SetupComplete bool
}

// WorkspaceInfo returns the workspace name and whether setup is complete. It
// needs no authentication, so it reveals nothing else.
func (s *Service) WorkspaceInfo(ctx context.Context) (WorkspaceInfo, error) {
	row, err := db.New(s.pool).GetWorkspaceInfo(ctx)
	if err != nil {
		return WorkspaceInfo{}, fmt.Errorf("get workspace info: %w", store.AdaptError(err))
	}
	return WorkspaceInfo{Name: row.Name, SetupComplete: row.SetupComplete}, nil
}
