package httpapi

import (
	"log/slog"

	"github.com/switchyard/switchyard/gen/apiserver"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/core"
	"github.com/switchyard/switchyard/server/identity"
	"github.com/switchyard/switchyard/server/measure"
	"github.com/switchyard/switchyard/server/notify"
	"github.com/switchyard/switchyard/server/release"
	"github.com/switchyard/switchyard/server/scim"
	"github.com/switchyard/switchyard/server/sso"
)

// Handlers implements the generated strict server interface. Each method
// converts the request, calls one identity (authentication, users, projects,
// environments, keys), core (flags, segments, governance), notify
// (webhooks, chat integrations), measure (measurement) or scim (SCIM tokens)
// method and converts the result.
type Handlers struct {
	core         *core.Service
	audit        *audit.Service
	identity     *identity.Service
	measure      *measure.Service
	notify       *notify.Service
	releases     *release.Service
	scim         *scim.Service
	sso          *sso.Service // nil: single sign-on routes answer as if it were off
	logger       *slog.Logger
	cookieSecure bool // the session cookie's Secure flag (COOKIE_SECURE)
}

var _ apiserver.StrictServerInterface = (*Handlers)(nil)
