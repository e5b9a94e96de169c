package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/sso"
)

var errNoSSO = apperr.E(apperr.NotFound, "single sign-on is not available")

// GetWorkspaceSSO returns the single sign-on settings, without the secret.
func (h *Handlers) GetWorkspaceSSO(ctx context.Context, _ apiserver.GetWorkspaceSSORequestObject) (apiserver.GetWorkspaceSSOResponseObject, error) {
	if h.sso == nil {
		return nil, errNoSSO
	}
	st, err := h.sso.Get(ctx, auth.FromContext(ctx))
	if err != nil {
		return nil, err
	}
	return apiserver.GetWorkspaceSSO200JSONResponse(ssoSettings(st)), nil
}

// PutWorkspaceSSO stores the single sign-on settings.
func (h *Handlers) PutWorkspaceSSO(ctx context.Context, req apiserver.PutWorkspaceSSORequestObject) (apiserver.PutWorkspaceSSOResponseObject, error) {
	if h.sso == nil {
		return nil, errNoSSO
	}
	b := req.Body
	in := sso.SettingsInput{
		Issuer: b.Issuer, ClientID: b.ClientId, ClientSecret: b.ClientSecret, GroupsClaim: b.GroupsClaim,
		AutoProvision: b.AutoProvision, PasswordLogin: (*string)(b.PasswordLogin),
	}
	if b.Scopes != nil {
		in.Scopes = *b.Scopes
	}
	if b.AllowedEmailDomains != nil {
		in.AllowedEmailDomains = *b.AllowedEmailDomains
	}
	if b.AdminGroups != nil {
		in.AdminGroups = *b.AdminGroups
	}
	if b.GroupMappings != nil {
		in.GroupMappings = make([]sso.GroupMapping, 0, len(*b.GroupMappings))
		for _, m := range *b.GroupMappings {
			in.GroupMappings = append(in.GroupMappings, sso.GroupMapping{Group: m.Group, ProjectID: m.ProjectId, Role: string(m.Role)})
		}
	}
	st, err := h.sso.Put(ctx, auth.FromContext(ctx), in)
	if err != nil {
		return nil, err
	}
	return apiserver.PutWorkspaceSSO200JSONResponse(ssoSettings(st)), nil
}

// DeleteWorkspaceSSO turns single sign-on off.
func (h *Handlers) DeleteWorkspaceSSO(ctx context.Context, _ apiserver.DeleteWorkspaceSSORequestObject) (apiserver.DeleteWorkspaceSSOResponseObject, error) {
	if h.sso == nil {
		return nil, errNoSSO
	}
	if err := h.sso.Delete(ctx, auth.FromContext(ctx)); err != nil {
		return nil, err
	}
	return apiserver.DeleteWorkspaceSSO204Response{}, nil
}

// GetAuthSSO tells the sign-in page whether single sign-on is on.
func (h *Handlers) GetAuthSSO(ctx context.Context, _ apiserver.GetAuthSSORequestObject) (apiserver.GetAuthSSOResponseObject, error) {
	info := sso.Info{PasswordLogin: sso.PasswordLoginEnabled}
	if h.sso != nil {
		var err error
		if info, err = h.sso.Info(ctx); err != nil {
			return nil, err
		}
	}
	return apiserver.GetAuthSSO200JSONResponse{Enabled: info.Enabled, PasswordLogin: apiserver.SSOPasswordLogin(info.PasswordLogin), LoginUrl: info.LoginURL}, nil
}

// OidcLogin redirects to the provider with a new sign-in cookie.
func (h *Handlers) OidcLogin(ctx context.Context, req apiserver.OidcLoginRequestObject) (apiserver.OidcLoginResponseObject, error) {
	if h.sso == nil {
		return ssoFailure(sso.CodeState), nil
	}
	var target string
	if req.Params.Redirect != nil {
		target = *req.Params.Redirect
	}
	location, cookie, err := h.sso.Begin(ctx, target)
	var f *sso.Failure
	if errors.As(err, &f) {
		return ssoFailure(f.Code), nil
	}
	if err != nil {
		return nil, err
	}
	return redirect{location: location, cookies: []string{sso.FlowCookie(cookie, sso.CookieLifetime, h.cookieSecure)}}, nil
}

// OidcCallback finishes a sign-in: a session and the saved path, or the
// sign-in page with an error code. The sign-in cookie is cleared either way.
func (h *Handlers) OidcCallback(ctx context.Context, req apiserver.OidcCallbackRequestObject) (apiserver.OidcCallbackResponseObject, error) {
	cleared := sso.FlowCookie("", -1, h.cookieSecure)
	if h.sso == nil {
		return ssoFailure(sso.CodeState, cleared), nil
	}
	p := req.Params
	in := sso.CallbackInput{Code: deref(p.Code), State: deref(p.State), ProviderError: deref(p.Error), Cookie: deref(p.LgSso)}
	res, err := h.sso.Finish(ctx, in)
	var f *sso.Failure
	if errors.As(err, &f) {
		h.logger.InfoContext(ctx, "sso sign-in refused", "code", f.Code, "reason", f.Err.Error())
		return ssoFailure(f.Code, cleared), nil
	}
	if err != nil {
		return nil, err
	}
	session := auth.SessionCookie(res.Cookie, auth.SessionLifetime, h.cookieSecure)
	return redirect{location: res.Redirect, cookies: []string{session, cleared}}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ssoFailure(code string, cookies ...string) redirect {
	return redirect{location: "/login?error=" + url.QueryEscape(code), cookies: cookies}
}

// redirect is a 302 that may set several cookies, which the generated
// response types (one Set-Cookie header each) cannot.
type redirect struct {
	location string
	cookies  []string
}

func (r redirect) visit(w http.ResponseWriter) error {
	w.Header().Set("Location", r.location)
	w.Header().Set("Cache-Control", "no-store")
	for _, c := range r.cookies {
		w.Header().Add("Set-Cookie", c)
	}
	w.WriteHeader(http.StatusFound)
	return nil
}

func (r redirect) VisitOidcLoginResponse(w http.ResponseWriter) error    { return r.visit(w) }
func (r redirect) VisitOidcCallbackResponse(w http.ResponseWriter) error { return r.visit(w) }

func ssoSettings(st sso.Settings) apiserver.SSOSettings {
	mappings := make([]apiserver.SSOGroupMapping, 0, len(st.GroupMappings))
	for _, m := range st.GroupMappings {
		mappings = append(mappings, apiserver.SSOGroupMapping{Group: m.Group, ProjectId: m.ProjectID, Role: apiserver.Role(m.Role)})
	}
	return apiserver.SSOSettings{
		Issuer: st.Issuer, ClientId: st.ClientID, ClientSecretSet: st.ClientSecretSet, Scopes: st.Scopes,
		GroupsClaim: st.GroupsClaim, AllowedEmailDomains: st.AllowedEmailDomains, AutoProvision: st.AutoProvision,
		GroupMappings: mappings, AdminGroups: st.AdminGroups, PasswordLogin: apiserver.SSOPasswordLogin(st.PasswordLogin),
		RedirectUri: st.RedirectURI,
	}
}

// TestWorkspaceSSO fetches a provider's discovery document and keys without
// storing anything.
func (h *Handlers) TestWorkspaceSSO(ctx context.Context, req apiserver.TestWorkspaceSSORequestObject) (apiserver.TestWorkspaceSSOResponseObject, error) {
	if h.sso == nil {
		return nil, errNoSSO
	}
	d, err := h.sso.Test(ctx, auth.FromContext(ctx), req.Body.Issuer)
	if err != nil {
		return nil, err
	}
	return apiserver.TestWorkspaceSSO200JSONResponse{
		Issuer: d.Issuer, AuthorizationEndpoint: d.AuthorizationEndpoint, TokenEndpoint: d.TokenEndpoint,
		UserinfoEndpoint: d.UserinfoEndpoint, JwksUri: d.JWKSURI, SigningKeys: d.SigningKeys,
	}, nil
}
