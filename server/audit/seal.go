package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/store"
)

// sealBatch is how many entries one statement seals.
const sealBatch = 1000

// writerWait bounds how long a seal waits for the transactions that hold
// trail ids to end; a seal that runs out of it seals nothing and the next
// turn tries again.
const writerWait = 5 * time.Second

// writerPoll is how often a seal looks whether those transactions ended.
const writerPoll = 10 * time.Millisecond

// Seal extends the hash chain over every entry committed since the last
// seal, in id order, and returns how many it sealed. One instance seals at
// a time; on the others Seal returns 0 at once.
//
// Ids are taken before commit, so entry 11 may commit before entry 10. A
// seal therefore reads the last id handed out, then waits for every
// transaction that holds a trail id (the writers' shared lock, taken before
// the id and held to commit) to end: after that, every id up to the one it
// read is committed or rolled back for good, and the chain never has to
// make room for a late entry.
func (t *Trail) Seal(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	return store.WithTxV(ctx, pool, func(q *db.Queries) (int, error) {
		locked, err := q.LockTrailSealer(ctx)
		if err != nil || !locked {
			return 0, err
		}
		through, err := q.LastTrailID(ctx)
		if err != nil {
			return 0, fmt.Errorf("read the last trail id: %w", err)
		}
		head, err := q.GetTrailHead(ctx)
		if err != nil {
			return 0, fmt.Errorf("read the trail's head: %w", err)
		}
		if through <= head.ID {
			return 0, nil
		}
		if done, err := waitForWriters(ctx, q); err != nil || !done {
			return 0, err
		}
		sealed, prev, after := 0, head.Hash, head.ID
		for {
			rows, err := q.ListTrailUnsealed(ctx, db.ListTrailUnsealedParams{AfterID: after, ThroughID: through, RowLimit: sealBatch})
			if err != nil {
				return 0, fmt.Errorf("read unsealed trail entries: %w", err)
			}
			if len(rows) == 0 {
				if sealed > 0 {
					if err := q.SetTrailHead(ctx, db.SetTrailHeadParams{ID: after, Hash: prev}); err != nil {
						return 0, fmt.Errorf("record the trail's head: %w", err)
					}
				}
				return sealed, nil
			}
			ids, hashes := make([]int64, len(rows)), make([][]byte, len(rows))
			for i, r := range rows {
				prev = chain(prev, r.Body)
				ids[i], hashes[i] = r.ID, prev
			}
			if err := q.SealTrailEntries(ctx, db.SealTrailEntriesParams{Ids: ids, Hashes: hashes}); err != nil {
				return 0, fmt.Errorf("seal trail entries: %w", err)
			}
			sealed += len(rows)
			after = ids[len(ids)-1]
		}
	})
}

// waitForWriters waits until every transaction that holds a trail id now
// has ended, and reports whether they did within writerWait. Transactions
// that take an id later get a larger one than any read before this call.
func waitForWriters(ctx context.Context, q *db.Queries) (bool, error) {
	first, err := q.ListTrailWriters(ctx)
	if err != nil {
		return false, fmt.Errorf("list trail writers: %w", err)
	}
	waiting := make(map[string]bool, len(first))
	for _, v := range first {
		waiting[v] = true
	}
	deadline := time.Now().Add(writerWait)
	for len(waiting) > 0 {
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(writerPoll):
		}
		now, err := q.ListTrailWriters(ctx)
		if err != nil {
			return false, fmt.Errorf("list trail writers: %w", err)
		}
		still := make(map[string]bool, len(waiting))
		for _, v := range now {
			if waiting[v] {
				still[v] = true
			}
		}
		waiting = still
	}
	return true, nil
}
