package store_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/server/internal/testenv"
)

// TestUUIDsRoundTrip sends ids every way the generated queries do (a value,
// a pointer, a nil pointer, in COPY) and reads them back, through a pool
// opened like the server's.
func TestUUIDsRoundTrip(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	ctx := t.Context()
	id := uuid.MustParse("0193a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b")

	var text string
	if err := pool.QueryRow(ctx, "SELECT $1::uuid::text", id).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != id.String() {
		t.Errorf("value: got %s, want %s", text, id)
	}
	var isNull bool
	if err := pool.QueryRow(ctx, "SELECT $1::uuid IS NULL, $2::uuid::text", (*uuid.UUID)(nil), &id).Scan(&isNull, &text); err != nil {
		t.Fatal(err)
	}
	if !isNull || text != id.String() {
		t.Errorf("pointers: got null=%v and %s, want true and %s", isNull, text, id)
	}

	if _, err := pool.Exec(ctx, "CREATE TABLE ids (id uuid, maybe uuid)"); err != nil {
		t.Fatal(err)
	}
	rows := [][]any{{id, nil}, {uuid.Nil, &id}}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"ids"}, []string{"id", "maybe"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	var got []string
	r, err := pool.Query(ctx, "SELECT id::text || '/' || coalesce(maybe::text, '-') FROM ids ORDER BY id DESC")
	if err != nil {
		t.Fatal(err)
	}
	got, err = pgx.CollectRows(r, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{id.String() + "/-", uuid.Nil.String() + "/" + id.String()}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("COPY: got %q, want %q", got, want)
	}
}
