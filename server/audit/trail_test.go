package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/audit"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/internal/testenv"
	"github.com/switchyard/switchyard/server/store"
)

var key = audit.KeyFrom("a test secret of at least thirty-two characters")

// record writes n entries, each in a transaction of its own.
func record(t *testing.T, pool *pgxpool.Pool, trail *audit.Trail, n int) {
	t.Helper()
	for i := range n {
		err := store.WithTx(t.Context(), pool, func(q *db.Queries) error {
			return trail.Record(t.Context(), q, change(i))
		})
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
}

func change(i int) audit.Change {
	key := fmt.Sprintf("flag-%d", i)
	return audit.Change{
		Action:   "flag.updated",
		Resource: audit.Resource{Type: audit.Flag, ID: key, Key: &key},
		Before:   map[string]any{"key": key, "enabled": false},
		After:    map[string]any{"key": key, "enabled": true},
	}
}

// seal seals until no entry waits for it and returns how many it sealed.
// A turn may seal nothing while another sealer's transaction still holds
// the sealers' lock (one whose client just gave up on it), so it retries.
func seal(t *testing.T, pool *pgxpool.Pool, trail *audit.Trail) int {
	t.Helper()
	total := 0
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := trail.Seal(t.Context(), pool)
		if err != nil {
			t.Fatalf("seal: %v", err)
		}
		total += n
		if n > 0 {
			continue
		}
		var waiting int
		head, err := db.New(pool).GetTrailHead(t.Context())
		if err == nil {
			err = pool.QueryRow(t.Context(), `SELECT count(*) FROM audit_trail t WHERE t.id > $1
			   AND NOT EXISTS (SELECT 1 FROM audit_trail_hashes h WHERE h.id = t.id)`, head.ID).Scan(&waiting)
		}
		if err != nil {
			t.Fatal(err)
		}
		if waiting == 0 {
			return total
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d entries still unsealed", waiting)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func verify(t *testing.T, pool *pgxpool.Pool, trail *audit.Trail) audit.Verification {
	t.Helper()
	v, err := trail.Verify(t.Context(), pool, nil, nil)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return v
}

// asDBA runs sql as someone who bypasses the append-only trigger, as a
// person with the database's superuser would.
func asDBA(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	ctx := t.Context()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSealedChainVerifies(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	trail := audit.New(key, nil)
	record(t, pool, trail, 25)
	if v := verify(t, pool, trail); !v.OK || v.Checked != 0 {
		t.Errorf("before sealing: %+v, want ok with nothing checked", v)
	}
	if n := seal(t, pool, trail); n != 25 {
		t.Errorf("sealed %d, want 25", n)
	}
	if v := verify(t, pool, trail); !v.OK || v.Checked != 25 || v.FirstBadID != nil {
		t.Errorf("after sealing: %+v, want ok with 25 checked", v)
	}
	// Another key cannot vouch for the entries.
	if v := verify(t, pool, audit.New(audit.KeyFrom("another secret"), nil)); v.OK || *v.FirstBadID != 1 {
		t.Errorf("verified under another key: %+v, want entry 1 bad", v)
	}
}

func TestVerifyFindsHandEdits(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		sql    string
		args   []any
		bad    int64
		reseal bool
	}{
		"body changed":           {sql: `UPDATE audit_trail SET body = convert_to(replace(convert_from(body, 'UTF8'), 'true', 'false'), 'UTF8') WHERE id = 5`, bad: 5},
		"filter column changed":  {sql: `UPDATE audit_trail SET actor_email = 'someone@else.example' WHERE id = 4`, bad: 4},
		"hash changed":           {sql: `UPDATE audit_trail_hashes SET hash = sha256('x') WHERE id = 6`, bad: 6},
		"deleted":                {sql: `DELETE FROM audit_trail WHERE id = 3`, bad: 4},
		"first deleted":          {sql: `DELETE FROM audit_trail WHERE id = 1`, bad: 2},
		"last deleted, then one": {sql: `DELETE FROM audit_trail WHERE id = 10`, bad: 11, reseal: true},
		"inserted at the end, sealed after": {
			sql: `INSERT INTO audit_trail (id, at, action, actor_kind, resource_type, resource_id, body, mac)
			      SELECT nextval('audit_trail_id_seq'), at, action, actor_kind, resource_type, resource_id,
			             convert_to(replace(convert_from(body, 'UTF8'), '"id":2,', '"id":' || currval('audit_trail_id_seq') || ','), 'UTF8'), mac
			      FROM audit_trail WHERE id = 2`,
			bad: 11, reseal: true,
		},
		"inserted in a gap, sealed copy": {
			sql: `WITH copy AS (
			          INSERT INTO audit_trail SELECT 100, at, action, actor_kind, actor_email, actor_label, resource_type,
			          resource_id, project_id, environment_id, body, mac FROM audit_trail WHERE id = 10)
			      INSERT INTO audit_trail_hashes SELECT 100, hash FROM audit_trail_hashes WHERE id = 10`,
			bad: 100, reseal: true,
		},
		"inserted behind the sealer": {
			sql: `INSERT INTO audit_trail (id, at, action, actor_kind, resource_type, resource_id, body, mac)
			      SELECT 7000, at, action, actor_kind, resource_type, resource_id, body, mac FROM audit_trail WHERE id = 1`,
			bad: 7000, reseal: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pool := testenv.Pool(t)
			trail := audit.New(key, nil)
			record(t, pool, trail, 10)
			seal(t, pool, trail)
			asDBA(t, pool, tc.sql, tc.args...)
			if tc.reseal {
				if name == "inserted behind the sealer" {
					// An entry the sealer will never reach, below a later sealed one.
					asDBA(t, pool, `SELECT setval('audit_trail_id_seq', 7000)`)
				}
				record(t, pool, trail, 1)
				seal(t, pool, trail)
			}
			v := verify(t, pool, trail)
			if v.OK || v.FirstBadID == nil || *v.FirstBadID != tc.bad {
				t.Errorf("verify = %+v, want first bad id %d", v, tc.bad)
			}
		})
	}
}

func TestTrailIsAppendOnly(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	trail := audit.New(key, nil)
	record(t, pool, trail, 2)
	seal(t, pool, trail)
	for _, sql := range []string{
		`UPDATE audit_trail SET action = 'flag.deleted' WHERE id = 1`,
		`UPDATE audit_trail_hashes SET hash = sha256('x') WHERE id = 2`,
		`DELETE FROM audit_trail WHERE id = 1`,
		`DELETE FROM audit_trail_hashes WHERE id = 1`,
	} {
		_, err := pool.Exec(t.Context(), sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23001" {
			t.Errorf("%s: err = %v, want restrict_violation", sql, err)
		}
	}
}

// TestRecordHoldsTheWritersLock checks the sealer's premise: from taking an
// id to its commit, a writer shows as a holder of the writers' lock.
func TestRecordHoldsTheWritersLock(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	ctx := t.Context()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := audit.New(key, nil).Record(ctx, db.New(pool).WithTx(tx), change(0)); err != nil {
		t.Fatal(err)
	}
	writers, err := db.New(pool).ListTrailWriters(ctx)
	if err != nil || len(writers) != 1 {
		t.Fatalf("writers = %v, %v; want the open transaction", writers, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if writers, err := db.New(pool).ListTrailWriters(ctx); err != nil || len(writers) != 0 {
		t.Fatalf("writers after commit = %v, %v; want none", writers, err)
	}
}

// TestSealWaitsForEarlierIDs: an entry that took its id first and commits
// last is still chained in id order, not skipped and not appended later.
func TestSealWaitsForEarlierIDs(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	ctx := t.Context()
	trail := audit.New(key, nil)
	slow, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = slow.Rollback(context.WithoutCancel(ctx)) }()
	if err := trail.Record(ctx, db.New(pool).WithTx(slow), change(1)); err != nil { // id 1
		t.Fatal(err)
	}
	record(t, pool, trail, 1) // id 2, committed first

	sealed := make(chan int, 1)
	go func() {
		n, err := trail.Seal(ctx, pool)
		if err != nil {
			t.Error(err)
		}
		sealed <- n
	}()
	select {
	case n := <-sealed:
		t.Fatalf("sealed %d entries while entry 1 was uncommitted", n)
	case <-time.After(200 * time.Millisecond):
	}
	if err := slow.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := <-sealed; n != 2 {
		t.Errorf("sealed %d, want both", n)
	}
	if v := verify(t, pool, trail); !v.OK || v.Checked != 2 {
		t.Errorf("verify = %+v, want 2 checked", v)
	}
}

// TestConcurrentWritersAndSealers: writers on many connections commit in
// any order while two sealers (two instances) run; the chain holds.
func TestConcurrentWritersAndSealers(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	other, err := store.Open(t.Context(), pool.Config().ConnString(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	trail := audit.New(key, nil)
	const writers, each = 8, 40
	ctx, cancel := context.WithCancel(t.Context())
	var sealers sync.WaitGroup
	for _, p := range []*pgxpool.Pool{pool, other} {
		sealers.Go(func() {
			for ctx.Err() == nil {
				if _, err := trail.Seal(ctx, p); err != nil && ctx.Err() == nil {
					t.Errorf("seal: %v", err)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := store.WithTx(ctx, pool, func(q *db.Queries) error {
					if err := trail.Record(ctx, q, change(w*each+i)); err != nil {
						return err
					}
					time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
					if i%7 == 3 {
						return errRollback
					}
					return nil
				})
				if err != nil && !errors.Is(err, errRollback) {
					t.Errorf("write: %v", err)
				}
			}
		})
	}
	wg.Wait()
	cancel()
	sealers.Wait()
	seal(t, pool, trail)
	committed := writers * (each - (each+3)/7)
	if v := verify(t, pool, trail); !v.OK || v.Checked != int64(committed) {
		t.Errorf("verify = %+v, want ok with %d checked", v, committed)
	}
}

var errRollback = errors.New("roll back")

func TestPruneKeepsTheChainVerifiable(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	trail := audit.New(key, clock)
	record(t, pool, trail, 5)
	now = now.Add(48 * time.Hour)
	record(t, pool, trail, 3)
	seal(t, pool, trail)
	n, err := trail.Prune(t.Context(), pool, now.Add(-24*time.Hour))
	if err != nil || n != 5 {
		t.Fatalf("pruned %d, %v; want the 5 older entries", n, err)
	}
	seal(t, pool, trail) // retention's own entry
	if v := verify(t, pool, trail); !v.OK || v.Checked != 4 {
		t.Errorf("verify after pruning = %+v, want the 3 kept and retention's own entry", v)
	}
	asDBA(t, pool, `DELETE FROM audit_trail WHERE id = 6`)
	if v := verify(t, pool, trail); v.OK || *v.FirstBadID != 7 {
		t.Errorf("verify after deleting the first kept entry = %+v, want 7 bad", v)
	}
}

func TestListFiltersAndPages(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	trail := audit.New(key, nil)
	ctx := t.Context()
	err := store.WithTx(ctx, pool, func(q *db.Queries) error {
		for i, a := range []audit.Actor{
			{Kind: audit.ActorUser, Email: audit.Str("Alice@Example.com")},
			{Kind: audit.ActorToken, Email: audit.Str("alice@example.com"), Label: audit.Str("pat_0123abcd")},
			{Kind: audit.ActorSDKKey, Label: audit.Str("sk_live_abcd")},
		} {
			c := change(i)
			c.Actor = &a
			if err := trail.Record(ctx, q, c); err != nil {
				return err
			}
		}
		return trail.Record(ctx, q, audit.Change{Action: "sdk_key.created", Resource: audit.Resource{Type: audit.SDKKey, ID: "7"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := audit.NewService(pool, trail)
	admin := adminPrincipal()
	for name, tc := range map[string]struct {
		f    audit.Filter
		want []int64
	}{
		"all":               {want: []int64{4, 3, 2, 1}},
		"email, any case":   {f: audit.Filter{Actor: audit.Str("ALICE@example.com")}, want: []int64{2, 1}},
		"token prefix":      {f: audit.Filter{Actor: audit.Str("pat_0123abcd")}, want: []int64{2}},
		"action prefix":     {f: audit.Filter{Action: audit.Str("flag.*")}, want: []int64{3, 2, 1}},
		"action with _":     {f: audit.Filter{Action: audit.Str("sdk_key.*")}, want: []int64{4}},
		"action exact":      {f: audit.Filter{Action: audit.Str("sdk_key.created")}, want: []int64{4}},
		"resource":          {f: audit.Filter{ResourceType: audit.Str("flag"), ResourceID: audit.Str("flag-1")}, want: []int64{2}},
		"nothing matches":   {f: audit.Filter{Action: audit.Str("flag.deleted")}, want: nil},
		"before the future": {f: audit.Filter{To: ptr(time.Now().Add(time.Hour))}, want: []int64{4, 3, 2, 1}},
		"after the future":  {f: audit.Filter{From: ptr(time.Now().Add(time.Hour))}, want: nil},
	} {
		t.Run(name, func(t *testing.T) {
			page, err := svc.List(ctx, admin, tc.f, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, it := range page.Items {
				var e struct {
					ID   int64   `json:"id"`
					Hash *string `json:"hash"`
				}
				if err := json.Unmarshal(it, &e); err != nil {
					t.Fatalf("entry %s: %v", it, err)
				}
				got = append(got, e.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || page.NextCursor != nil {
				t.Errorf("ids = %v (next %v), want %v", got, page.NextCursor, tc.want)
			}
		})
	}
	// Pages of two: a cursor after the first, none after the last.
	one := int32(2)
	first, err := svc.List(ctx, admin, audit.Filter{}, nil, &one)
	if err != nil || len(first.Items) != 2 || first.NextCursor == nil {
		t.Fatalf("first page = %d items, next %v, %v", len(first.Items), first.NextCursor, err)
	}
	second, err := svc.List(ctx, admin, audit.Filter{}, first.NextCursor, &one)
	if err != nil || len(second.Items) != 2 || second.NextCursor != nil {
		t.Fatalf("second page = %d items, next %v, %v", len(second.Items), second.NextCursor, err)
	}
	if _, err := svc.List(ctx, admin, audit.Filter{}, audit.Str("x"), nil); err == nil {
		t.Error("a malformed cursor was accepted")
	}
}

func ptr[T any](v T) *T { return &v }

func adminPrincipal() *auth.Principal {
	return &auth.Principal{Kind: auth.KindUser, UserID: 1, Email: "admin@example.com", Role: auth.RoleAdmin}
}
