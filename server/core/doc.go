// Package core holds Switchyard's business operations, one file per resource.
// Exported methods of Service own their transaction (store.WithTx) and return
// apperr kinds; unexported helpers take the transaction's *db.Queries so that
// several operations can share them (STYLE §3, §5).
package core
