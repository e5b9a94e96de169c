package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
)

// ListUsers answers the workspace's users, newest first.
func (h *Handlers) ListUsers(ctx context.Context, _ apiserver.ListUsersRequestObject) (apiserver.ListUsersResponseObject, error) {
	users, err := h.identity.ListUsers(ctx, auth.FromContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListUsers200JSONResponse, len(users))
	for i, u := range users {
		out[i] = userJSON(u)
	}
	return out, nil
}

// CreateUser creates a workspace user.
func (h *Handlers) CreateUser(ctx context.Context, req apiserver.CreateUserRequestObject) (apiserver.CreateUserResponseObject, error) {
	u, err := h.identity.CreateUser(ctx, auth.FromContext(ctx), identity.UserInput{
		Name: req.Body.Name, Email: string(req.Body.Email), Role: string(req.Body.Role), Password: req.Body.Password,
	})
	if err != nil {
		return nil, err
	}
	return apiserver.CreateUser200JSONResponse(userJSON(u)), nil
}

// UpdateUser changes a user's name, workspace role or activation.
func (h *Handlers) UpdateUser(ctx context.Context, req apiserver.UpdateUserRequestObject) (apiserver.UpdateUserResponseObject, error) {
	var role *string
	if req.Body.Role != nil {
		r := string(*req.Body.Role)
		role = &r
	}
	u, err := h.identity.UpdateUser(ctx, auth.FromContext(ctx), req.Id, identity.UserPatch{Name: req.Body.Name, Role: role, Active: req.Body.Active})
	if err != nil {
		return nil, err
	}
	return apiserver.UpdateUser200JSONResponse(userJSON(u)), nil
}

// DeleteUser deletes a user with their sessions and tokens.
func (h *Handlers) DeleteUser(ctx context.Context, req apiserver.DeleteUserRequestObject) (apiserver.DeleteUserResponseObject, error) {
	if err := h.identity.DeleteUser(ctx, auth.FromContext(ctx), req.Id); err != nil {
		return nil, err
	}
	return apiserver.DeleteUser204Response{}, nil
}

func userJSON(u db.ListUsersRow) apiserver.User {
	return apiserver.User{
		Id: u.ID, Name: u.Name, Email: u.Email, Role: apiserver.Role(u.Role),
		Active: u.Active, SsoLinked: u.SsoLinked, CreatedAt: u.CreatedAt,
	}
}
