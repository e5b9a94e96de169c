package store

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestUUIDEncodesAsBytes checks that a uuid.UUID takes the 16-byte plan,
// not pgx's driver.Valuer fallback through text, and encodes the same bytes
// as pgtype's own UUID.
func TestUUIDEncodesAsBytes(t *testing.T) {
	m := pgtype.NewMap()
	encodeUUIDsAsBytes(m)
	id := uuid.New()
	if plan := m.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id); plan == nil {
		t.Fatal("no plan for uuid.UUID")
	} else if _, ok := plan.(*uuidEncodePlan); !ok {
		t.Fatalf("uuid.UUID is encoded by %T, want *uuidEncodePlan", plan)
	}
	got, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(id[:]) {
		t.Errorf("encoded %x, want %x", got, id[:])
	}
}

// BenchmarkEncodeUUID compares a uuid.UUID encoded for COPY with and without
// encodeUUIDsAsBytes.
func BenchmarkEncodeUUID(b *testing.B) {
	id := uuid.New()
	for _, bc := range []struct {
		name string
		m    *pgtype.Map
	}{{"fallback", pgtype.NewMap()}, {"bytes", func() *pgtype.Map { m := pgtype.NewMap(); encodeUUIDsAsBytes(m); return m }()}} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			for b.Loop() {
				if _, err := bc.m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id, buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
