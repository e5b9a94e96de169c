package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
)

// These methods answer 501 until the identity and access control work lands; it deletes
// them from this file as it implements them.

// ListProjects is not built yet (identity and access control).
func (h *Handlers) ListProjects(context.Context, apiserver.ListProjectsRequestObject) (apiserver.ListProjectsResponseObject, error) {
	return nil, notImplemented("ListProjects")
}

// CreateProject is not built yet (identity and access control).
func (h *Handlers) CreateProject(context.Context, apiserver.CreateProjectRequestObject) (apiserver.CreateProjectResponseObject, error) {
	return nil, notImplemented("CreateProject")
}

// DeleteProject is not built yet (identity and access control).
func (h *Handlers) DeleteProject(context.Context, apiserver.DeleteProjectRequestObject) (apiserver.DeleteProjectResponseObject, error) {
	return nil, notImplemented("DeleteProject")
}

// RenameProject is not built yet (identity and access control).
func (h *Handlers) RenameProject(context.Context, apiserver.RenameProjectRequestObject) (apiserver.RenameProjectResponseObject, error) {
	return nil, notImplemented("RenameProject")
}

// ListEnvironments is not built yet (identity and access control).
func (h *Handlers) ListEnvironments(context.Context, apiserver.ListEnvironmentsRequestObject) (apiserver.ListEnvironmentsResponseObject, error) {
	return nil, notImplemented("ListEnvironments")
}

// CreateEnvironment is not built yet (identity and access control).
func (h *Handlers) CreateEnvironment(context.Context, apiserver.CreateEnvironmentRequestObject) (apiserver.CreateEnvironmentResponseObject, error) {
	return nil, notImplemented("CreateEnvironment")
}

// DeleteEnvironment is not built yet (identity and access control).
func (h *Handlers) DeleteEnvironment(context.Context, apiserver.DeleteEnvironmentRequestObject) (apiserver.DeleteEnvironmentResponseObject, error) {
	return nil, notImplemented("DeleteEnvironment")
}

// UpdateEnvironment is not built yet (identity and access control).
func (h *Handlers) UpdateEnvironment(context.Context, apiserver.UpdateEnvironmentRequestObject) (apiserver.UpdateEnvironmentResponseObject, error) {
	return nil, notImplemented("UpdateEnvironment")
}

// SetDefaultEnvironment is not built yet (identity and access control).
func (h *Handlers) SetDefaultEnvironment(context.Context, apiserver.SetDefaultEnvironmentRequestObject) (apiserver.SetDefaultEnvironmentResponseObject, error) {
	return nil, notImplemented("SetDefaultEnvironment")
}

// SetRequireApproval is not built yet (identity and access control).
func (h *Handlers) SetRequireApproval(context.Context, apiserver.SetRequireApprovalRequestObject) (apiserver.SetRequireApprovalResponseObject, error) {
	return nil, notImplemented("SetRequireApproval")
}

// ListSdkKeys is not built yet (identity and access control).
func (h *Handlers) ListSdkKeys(context.Context, apiserver.ListSdkKeysRequestObject) (apiserver.ListSdkKeysResponseObject, error) {
	return nil, notImplemented("ListSdkKeys")
}

// CreateSdkKey is not built yet (identity and access control).
func (h *Handlers) CreateSdkKey(context.Context, apiserver.CreateSdkKeyRequestObject) (apiserver.CreateSdkKeyResponseObject, error) {
	return nil, notImplemented("CreateSdkKey")
}

// RevokeSdkKey is not built yet (identity and access control).
func (h *Handlers) RevokeSdkKey(context.Context, apiserver.RevokeSdkKeyRequestObject) (apiserver.RevokeSdkKeyResponseObject, error) {
	return nil, notImplemented("RevokeSdkKey")
}

// ListMembers is not built yet (identity and access control).
func (h *Handlers) ListMembers(context.Context, apiserver.ListMembersRequestObject) (apiserver.ListMembersResponseObject, error) {
	return nil, notImplemented("ListMembers")
}

// AddMember is not built yet (identity and access control).
func (h *Handlers) AddMember(context.Context, apiserver.AddMemberRequestObject) (apiserver.AddMemberResponseObject, error) {
	return nil, notImplemented("AddMember")
}

// RemoveMember is not built yet (identity and access control).
func (h *Handlers) RemoveMember(context.Context, apiserver.RemoveMemberRequestObject) (apiserver.RemoveMemberResponseObject, error) {
	return nil, notImplemented("RemoveMember")
}

// UpdateMember is not built yet (identity and access control).
func (h *Handlers) UpdateMember(context.Context, apiserver.UpdateMemberRequestObject) (apiserver.UpdateMemberResponseObject, error) {
	return nil, notImplemented("UpdateMember")
}

// ListTokens is not built yet (identity and access control).
func (h *Handlers) ListTokens(context.Context, apiserver.ListTokensRequestObject) (apiserver.ListTokensResponseObject, error) {
	return nil, notImplemented("ListTokens")
}

// CreateToken is not built yet (identity and access control).
func (h *Handlers) CreateToken(context.Context, apiserver.CreateTokenRequestObject) (apiserver.CreateTokenResponseObject, error) {
	return nil, notImplemented("CreateToken")
}

// DeleteToken is not built yet (identity and access control).
func (h *Handlers) DeleteToken(context.Context, apiserver.DeleteTokenRequestObject) (apiserver.DeleteTokenResponseObject, error) {
	return nil, notImplemented("DeleteToken")
}

// ListUsers is not built yet (identity and access control).
func (h *Handlers) ListUsers(context.Context, apiserver.ListUsersRequestObject) (apiserver.ListUsersResponseObject, error) {
	return nil, notImplemented("ListUsers")
}

// CreateUser is not built yet (identity and access control).
func (h *Handlers) CreateUser(context.Context, apiserver.CreateUserRequestObject) (apiserver.CreateUserResponseObject, error) {
	return nil, notImplemented("CreateUser")
}

// DeleteUser is not built yet (identity and access control).
func (h *Handlers) DeleteUser(context.Context, apiserver.DeleteUserRequestObject) (apiserver.DeleteUserResponseObject, error) {
	return nil, notImplemented("DeleteUser")
}

// UpdateUser is not built yet (identity and access control).
func (h *Handlers) UpdateUser(context.Context, apiserver.UpdateUserRequestObject) (apiserver.UpdateUserResponseObject, error) {
	return nil, notImplemented("UpdateUser")
}
