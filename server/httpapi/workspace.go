package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
)

// GetWorkspace answers the public workspace summary used by the login and
// setup screens.
func (h *Handlers) GetWorkspace(ctx context.Context, _ apiserver.GetWorkspaceRequestObject) (apiserver.GetWorkspaceResponseObject, error) {
	info, err := h.identity.WorkspaceInfo(ctx)
	if err != nil {
		return nil, err
	}
	return apiserver.GetWorkspace200JSONResponse{WorkspaceName: info.Name, IsSetupComplete: info.SetupComplete}, nil
}
