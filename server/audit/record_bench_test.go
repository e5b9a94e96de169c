package audit_test

import (
	"testing"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/store"
)

// BenchmarkRecord is what Record adds to a transaction that writes one
// row: the transaction alone, then with an entry (a flag's states).
func BenchmarkRecord(b *testing.B) {
	pool := testenv.Pool(b)
	ctx := b.Context()
	for _, tc := range []struct {
		name  string
		trail *audit.Trail
	}{{"without", audit.Disabled()}, {"with", audit.New(key, nil)}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				err := store.WithTx(ctx, pool, func(q *db.Queries) error {
					// A write of its own, so that both commit (and flush) alike.
					if err := q.SetTrailHead(ctx, db.SetTrailHeadParams{ID: 0, Hash: []byte{}}); err != nil {
						return err
					}
					return tc.trail.Record(ctx, q, change(1))
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
