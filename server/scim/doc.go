// Package scim provisions workspace users and groups through SCIM 2.0
// (RFC 7643 and RFC 7644), as Okta and Microsoft Entra ID speak it: the
// tokens a workspace admin creates for an identity provider, and the
// hand-written /scim/v2/ handler that provider calls (docs/scim.md).
//
// Identity owns users; this package writes the same rows with its own sqlc
// queries and ends credentials the way identity does: triggers record every
// ended credential in the change log, and after the commit the service makes
// this instance forget them and publishes them to every other one (see txV).
// Every change that alters a user's groups applies single sign-on's group
// mappings and admin groups to them in its own transaction (groupsync).
package scim
