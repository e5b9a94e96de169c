// Package core holds Switchyard's business operations on flags, one file per
// resource: flags, segments, validation, merge patch, segment expansion,
// diff, promotion, change requests, schedules, the audit log, the change log
// and notifications. Users, credentials, projects and environments are
// package identity's; neither imports the other.
// Exported methods of Service own their transaction (store.WithTx and
// store.WithTxV: no transaction of core ends a credential) and return apperr
// kinds; unexported helpers take the transaction's *db.Queries so that
// several operations can share them (STYLE §3, §5).
package core
