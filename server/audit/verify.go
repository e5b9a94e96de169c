package audit

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"hash"
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
	// The next batch is read while this one is checked: the database and
	// the hashing each take about half of a verification's time.
	batches := make(chan []db.ListTrailForVerifyRow, 1)
	readErr := make(chan error, 1)
	readCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		defer close(batches)
		after := span.FirstID - 1
		for after < span.LastID {
			rows, err := q.ListTrailForVerify(readCtx, db.ListTrailForVerifyParams{AfterID: after, ThroughID: &span.LastID, RowLimit: verifyBatch})
			if err != nil {
				readErr <- fmt.Errorf("read trail entries after %d: %w", after, err)
				return
			}
			if len(rows) == 0 {
				return
			}
			select {
			case batches <- rows:
			case <-readCtx.Done():
				return
			}
			after = rows[len(rows)-1].ID
		}
	}()
	c := t.checker()
	var lastSealed int64
	for rows := range batches {
		for _, r := range rows {
			switch {
			case r.Hash == nil && r.ID < head.ID:
				return bad(r.ID) // behind the sealer, which never goes back
			case r.Hash == nil:
				continue // not sealed yet
			case r.ID > head.ID || !c.holds(r, prev):
				return bad(r.ID)
			}
			v.Checked++
			prev, lastSealed = r.Hash, r.ID
		}
	}
	select {
	case err := <-readErr:
		return Verification{}, err
	default:
	}
	if to == nil && lastSealed < head.ID {
		// The newest sealed entries are gone: the next entry, when one
		// comes, is reported; until then the head's own id is.
		return bad(head.ID)
	}
	return v, nil
}

// checker checks rows with hash states reused from row to row.
type checker struct {
	mac, sha hash.Hash
	buf      []byte
}

func (t *Trail) checker() *checker {
	return &checker{mac: hmac.New(sha256.New, t.key), sha: sha256.New()}
}

// holds reports whether a sealed row is the one the server wrote and the
// chain's next link after prev.
func (c *checker) holds(r db.ListTrailForVerifyRow, prev []byte) bool {
	prefix := strconv.AppendInt(append(c.buf[:0], `{"id":`...), r.ID, 10)
	prefix = append(prefix, ',')
	c.buf = prefix
	if !bytes.HasPrefix(r.Body, prefix) {
		return false
	}
	c.mac.Reset()
	sum := macWith(c.mac, columnsOf(r), c.buf[len(c.buf):])
	if !hmac.Equal(r.Mac, sum) {
		return false
	}
	c.sha.Reset()
	c.sha.Write(prev)
	c.sha.Write(r.Body)
	return bytes.Equal(r.Hash, c.sha.Sum(sum[:0]))
}
