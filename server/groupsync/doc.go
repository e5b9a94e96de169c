// Package groupsync turns a user's identity-provider groups into their
// workspace role and project memberships: the single sign-on settings' admin
// groups and group mappings, applied to the union of the user's SCIM groups
// and the groups claim of their latest sign-in (docs/scim.md, Groups and
// roles; docs/sso.md, What a sign-in does).
//
// Single sign-on (at a sign-in) and SCIM (at every change of a group or of
// its members) both call it inside their own transactions, and it records
// each membership and workspace role it changes in the audit trail of that
// transaction, by the caller's actor; User and Member are the API forms
// those entries, and the callers' own user entries, hold.
//
// It lives apart from sso and scim so that neither imports the other: sso
// would drag SCIM's protocol into sign-ins, and scim would drag the OpenID
// client into provisioning.
package groupsync
