package audit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
)

// verifyBatch is how many rows verification reads at a time.
const verifyBatch = 5000

// Verification is the answer of GET /api/audit/verify.
type Verification struct {
	OK         bool
	Checked    int64
	FirstBadID *int64
}

// Verify recomputes the chain over the sealed entries whose at is in
// [from, to) (either end open when nil), from the stored hash of the entry
// before the first, and reports the first entry that does not hold: its
// hash is not SHA-256 over the previous entry's hash and its body (an entry
// changed, or the one after an entry deleted), its MAC does not match (an
// entry inserted, or a column changed, by anyone without the server's key),
// its body names another id, it is not sealed though the sealer has passed
// it (inserted behind the sealer), or it is sealed beyond the sealer's head;
// and, verifying up to now, whether the newest sealed entries are gone.
func (t *Trail) Verify(ctx context.Context, pool *pgxpool.Pool, from, to *time.Time) (Verification, error) {
	t = t.orDefault()
	q := db.New(pool)
	span, err := q.GetTrailIDRange(ctx, db.GetTrailIDRangeParams{FromAt: from, ToAt: to})
	if err != nil {
		return Verification{}, fmt.Errorf("bound the verified range: %w", err)
	}
	head, err := q.GetTrailHead(ctx)
	if err != nil {
		return Verification{}, fmt.Errorf("read the trail's head: %w", err)
	}
	v := Verification{OK: true}
	bad := func(id int64) (Verification, error) {
		v.OK, v.FirstBadID = false, &id
		return v, nil
	}
	if span.FirstID == 0 {
		if to == nil && head.ID >= max(span.FirstID, 1) && from == nil {
			return bad(head.ID) // sealed entries were, and none is left
		}
		return v, nil
	}
	prev, err := q.GetTrailHashBefore(ctx, span.FirstID)
	if err != nil {
		return Verification{}, fmt.Errorf("read the hash before entry %d: %w", span.FirstID, err)
	}
	var lastSealed int64
	after := span.FirstID - 1
	for after < span.LastID {
		rows, err := q.ListTrailForVerify(ctx, db.ListTrailForVerifyParams{AfterID: after, ThroughID: &span.LastID, RowLimit: verifyBatch})
		if err != nil {
			return Verification{}, fmt.Errorf("read trail entries after %d: %w", after, err)
		}
		if len(rows) == 0 {
			break
		}
		for _, r := range rows {
			after = r.ID
			switch {
			case r.Hash == nil && r.ID < head.ID:
				return bad(r.ID) // behind the sealer, which never goes back
			case r.Hash == nil:
				continue // not sealed yet
			case r.ID > head.ID || !t.holds(r, prev):
				return bad(r.ID)
			}
			v.Checked++
			prev, lastSealed = r.Hash, r.ID
		}
	}
	if to == nil && lastSealed < head.ID {
		// The newest sealed entries are gone: the next entry, when one
		// comes, is reported; until then the head's own id is.
		return bad(head.ID)
	}
	return v, nil
}

// holds reports whether a sealed row is the one the server wrote and the
// chain's next link after prev.
func (t *Trail) holds(r db.AuditTrail, prev []byte) bool {
	prefix := `{"id":` + strconv.FormatInt(r.ID, 10) + `,`
	return bytes.HasPrefix(r.Body, []byte(prefix)) &&
		hmac.Equal(r.Mac, t.mac(columnsOf(r))) &&
		bytes.Equal(r.Hash, chain(prev, r.Body))
}
