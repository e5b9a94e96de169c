// Package core holds Switchyard's business operations, one file per resource.
// Exported methods of Service own their transaction (s.tx and txV in tx.go,
// which also end the credentials a transaction ended) and return apperr kinds; unexported helpers take the transaction's *db.Queries so that
// several operations can share them (STYLE §3, §5).
package core
