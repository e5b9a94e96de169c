// Package sso signs users in through one OpenID Connect provider: the
// workspace's provider settings, the authorization code flow with PKCE, and
// what a sign-in does to the user (find, link or provision; record the
// groups claim; group mappings and admin groups, which groupsync applies for
// sign-ins and SCIM alike). Sessions are the identity service's: this package
// declares the one method it needs from it (Sessions) and never reaches into
// it.
package sso
