package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/identity"
)

// Login checks the credentials and sets the session cookie.
func (h *Handlers) Login(ctx context.Context, req apiserver.LoginRequestObject) (apiserver.LoginResponseObject, error) {
	sess, err := h.identity.Login(ctx, req.Body.Email, req.Body.Password)
	if err != nil {
		return nil, err
	}
	cookie := h.sessionCookie(sess)
	return apiserver.Login200JSONResponse{Body: currentUser(sess.User), Headers: apiserver.Login200ResponseHeaders{SetCookie: &cookie}}, nil
}

// Logout ends the session and clears the cookie.
func (h *Handlers) Logout(ctx context.Context, _ apiserver.LogoutRequestObject) (apiserver.LogoutResponseObject, error) {
	if err := h.identity.Logout(ctx, auth.FromContext(ctx)); err != nil {
		return nil, err
	}
	cleared := auth.SessionCookie("", -1, h.cookieSecure)
	return apiserver.Logout204Response{Headers: apiserver.Logout204ResponseHeaders{SetCookie: &cleared}}, nil
}

// GetCurrentUser answers who is logged in.
func (h *Handlers) GetCurrentUser(ctx context.Context, _ apiserver.GetCurrentUserRequestObject) (apiserver.GetCurrentUserResponseObject, error) {
	u, err := h.identity.Me(ctx, auth.FromContext(ctx))
	if err != nil {
		return nil, err
	}
	return apiserver.GetCurrentUser200JSONResponse(currentUser(u)), nil
}

// SetupWorkspace creates the first admin and logs them in.
func (h *Handlers) SetupWorkspace(ctx context.Context, req apiserver.SetupWorkspaceRequestObject) (apiserver.SetupWorkspaceResponseObject, error) {
	in := identity.SetupInput{Name: req.Body.Name, Email: string(req.Body.Email), Password: req.Body.Password}
	if req.Body.WorkspaceName != nil {
		in.WorkspaceName = *req.Body.WorkspaceName
	}
	sess, err := h.identity.Setup(ctx, in)
	if err != nil {
		return nil, err
	}
	cookie := h.sessionCookie(sess)
	return apiserver.SetupWorkspace200JSONResponse{Body: currentUser(sess.User), Headers: apiserver.SetupWorkspace200ResponseHeaders{SetCookie: &cookie}}, nil
}

// sessionCookie lives as long as a new session: the contract's Max-Age is
// exactly 7 days, not what remains after a slow request.
func (h *Handlers) sessionCookie(sess identity.Session) string {
	return auth.SessionCookie(sess.Cookie, auth.SessionLifetime, h.cookieSecure)
}

func currentUser(u identity.CurrentUser) apiserver.CurrentUser {
	return apiserver.CurrentUser{
		Id: u.ID, Email: u.Email, Name: u.Name, Role: apiserver.Role(u.Role),
		WorkspaceName: u.WorkspaceName, IsSetupComplete: u.IsSetupComplete,
	}
}
