// Package store is Switchyard's PostgreSQL plumbing: the connection pool
// (Open), schema migrations at startup (Migrate), the one transaction helper
// (WithTx, WithTxV) and the one translation of database errors into apperr
// kinds (AdaptError). Queries themselves are sqlc-generated in package db;
// business rules live in the service packages (identity, core, notify,
// measure).
package store
