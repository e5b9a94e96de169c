// Package core holds Switchyard's business operations on flags, one file per
// resource: flags, segments, validation, merge patch, segment expansion,
// diff, promotion, change requests, schedules and the audit log. A write
// enqueues its notifications through package notify, which owns them, and
// announces its committed changes on the bus. Users, credentials, projects
// and environments are package identity's; neither imports the other.
//
// Exported methods of Service own their transaction (store.WithTx and
// store.WithTxV: no transaction of core ends a credential) and return apperr
// kinds; unexported helpers take the transaction's *db.Queries so that
// several operations can share them (docs/reference/code-style.md, §5
// Transactions).
package core
