// Package migrations holds Switchyard's goose SQL migrations and embeds them,
// so the server binary migrates its database at startup without reading files
// from disk (see server/store.Migrate). Files are numbered 00001_name.sql,
// each with an up and a down section; a merged migration is never edited.
package migrations

import "embed"

// FS holds every *.sql migration file of this directory.
//
//go:embed *.sql
var FS embed.FS
