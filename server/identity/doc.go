// Package identity holds who may use Switchyard, and with what, one file per
// resource: the workspace and its first-boot seed, users, project members,
// personal access tokens, SDK keys, projects and their environments, and
// authentication with its SDK-key cache. It stands beside core (flags,
// segments and their governance); neither imports the other.
//
// Exported methods of Service own their transaction (s.tx and txV in tx.go,
// which also end the credentials a transaction ended, on this instance and,
// through the bus, on every other) and return apperr kinds; unexported
// helpers take the transaction's *db.Queries so that several operations can
// share them.
package identity
