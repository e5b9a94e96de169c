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
// its body names another id, or it is not sealed though a later entry is
// (inserted behind the sealer).
func (t *Trail) Verify(ctx context.Context, pool *pgxpool.Pool, from, to *time.Time) (Verification, error) {
	t = t.orDefault()
	q := db.New(pool)
	span, err := q.GetTrailIDRange(ctx, db.GetTrailIDRangeParams{FromAt: from, ToAt: to})
	if err != nil {
		return Verification{}, fmt.Errorf("bound the verified range: %w", err)
	}
	v := Verification{OK: true}
	if span.FirstID == 0 {
		return v, nil
	}
	prev, err := q.GetTrailHashBefore(ctx, span.FirstID)
	if err != nil {
		return Verification{}, fmt.Errorf("read the hash before entry %d: %w", span.FirstID, err)
	}
	var unsealed int64 // the first entry without a hash since the last sealed one
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
			if r.Hash == nil {
				if unsealed == 0 {
					unsealed = r.ID
				}
				continue
			}
			bad := unsealed
			if bad == 0 && !t.holds(r, prev) {
				bad = r.ID
			}
			if bad != 0 {
				v.OK, v.FirstBadID = false, &bad
				return v, nil
			}
			v.Checked++
			prev = r.Hash
		}
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
