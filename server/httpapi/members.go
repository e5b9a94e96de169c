package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
)

// ListMembers answers a project's members with their names and emails.
func (h *Handlers) ListMembers(ctx context.Context, req apiserver.ListMembersRequestObject) (apiserver.ListMembersResponseObject, error) {
	members, err := h.identity.ListMembers(ctx, auth.FromContext(ctx), req.ProjectId)
	if err != nil {
		return nil, err
	}
	out := make(apiserver.ListMembers200JSONResponse, len(members))
	for i, m := range members {
		out[i] = memberJSON(m)
	}
	return out, nil
}

// AddMember gives a user a role in a project.
func (h *Handlers) AddMember(ctx context.Context, req apiserver.AddMemberRequestObject) (apiserver.AddMemberResponseObject, error) {
	m, err := h.identity.AddMember(ctx, auth.FromContext(ctx), req.ProjectId, req.Body.UserId, string(req.Body.Role))
	if err != nil {
		return nil, err
	}
	return apiserver.AddMember200JSONResponse(memberJSON(m)), nil
}

// UpdateMember changes a member's role.
func (h *Handlers) UpdateMember(ctx context.Context, req apiserver.UpdateMemberRequestObject) (apiserver.UpdateMemberResponseObject, error) {
	m, err := h.identity.UpdateMember(ctx, auth.FromContext(ctx), req.ProjectId, req.UserId, string(req.Body.Role))
	if err != nil {
		return nil, err
	}
	return apiserver.UpdateMember200JSONResponse(memberJSON(m)), nil
}

// RemoveMember revokes a user's access to a project.
func (h *Handlers) RemoveMember(ctx context.Context, req apiserver.RemoveMemberRequestObject) (apiserver.RemoveMemberResponseObject, error) {
	if err := h.identity.RemoveMember(ctx, auth.FromContext(ctx), req.ProjectId, req.UserId); err != nil {
		return nil, err
	}
	return apiserver.RemoveMember204Response{}, nil
}

func memberJSON(m db.ListMembersRow) apiserver.Member {
	return apiserver.Member{UserId: m.UserID, Name: m.Name, Email: m.Email, Role: apiserver.Role(m.Role)}
}
