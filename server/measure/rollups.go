package measure

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/switchyard/switchyard/db"
	"github.com/switchyard/switchyard/server/access"
	"github.com/switchyard/switchyard/server/auth"
	"github.com/switchyard/switchyard/server/store"
)

// Rollups are folded from the raw rows after ingest, not inside it, so that
// ingest runs near raw COPY speed, up to a watermark per kind
// (migrations/00006_rollup_watermarks.sql):
//
//   - Ingest copies the raw rows holding a shared advisory lock.
//   - A fold first passes a barrier: it takes that lock exclusively, which is
//     granted once every ingest in flight has committed, and reads the
//     largest committed ids. Later ingests draw larger ids. So every row at
//     or below that id is committed, and every acknowledged ingest is at or
//     below it.
//   - It then folds the rows between the watermark and that id, in ranges of
//     foldChunk ids, each in one transaction that locks the watermark row,
//     folds with one statement and advances the watermark. The row lock
//     serialises folders across instances, so each row is folded exactly
//     once.
//
// Reads do not fold: they add up the rollups and the unfolded tail in one
// snapshot (read.go). The background folder (RunRollupFolder) keeps that
// tail short, and the ingest gate (gate.go) keeps it bounded when ingest
// outruns the folder.

// Kinds of rollup, the keys of rollup_watermarks.
const (
	rollupImpressions = "impressions"
	rollupEvents      = "events"
	rollupSummaries   = "summaries"
)

// foldChunk is the widest id range one fold transaction covers: large
// enough that the per-statement cost vanishes, small enough to keep the
// transaction (and its memory for sorting) bounded.
const foldChunk = 50_000

// ingestBatch is the one ingest transaction: once the gate admits the n
// rows of kind (gate.go), check that the caller may report to the
// environment (any reader, SDK keys included), and copy the rows under the
// shared ingest lock (see above). A caller the key alone does not vouch for
// is checked before the gate as well, so that one without access is
// answered at once rather than after waiting for the fold.
func (s *Service) ingestBatch(ctx context.Context, p *auth.Principal, envID uuid.UUID, kind, n int, copyRows func(*db.Queries) error) error {
	if err := ingestAccess(ctx, db.New(s.pool), p, envID); err != nil {
		return store.AdaptError(err)
	}
	if err := s.admit(ctx, kind, n); err != nil {
		return err
	}
	err := store.WithTx(ctx, s.pool, func(q *db.Queries) error {
		if err := ingestAccess(ctx, q, p, envID); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if err := q.LockIngestShared(ctx); err != nil {
			return err
		}
		// One lock of the environment's row per batch instead of a foreign
		// key checked per row (migrations/00011).
		if _, err := q.LockEnvironmentForIngest(ctx, envID); errors.Is(err, pgx.ErrNoRows) {
			return access.ErrEnvNotFound
		} else if err != nil {
			return err
		}
		return copyRows(q)
	})
	return store.AdaptError(err)
}

// ingestAccess is access.Env with access.Ingest, without a query for an SDK
// key of the environment: authentication already found the key's
// environment (the key cache or sdk_keys), and an environment deleted since
// is found gone by the batch's LockEnvironmentForIngest, which answers 404
// like access.Env would.
func ingestAccess(ctx context.Context, q *db.Queries, p *auth.Principal, envID uuid.UUID) error {
	if p != nil && p.Kind == auth.KindSDKKey && p.EnvironmentID == envID {
		return nil
	}
	_, err := access.Env(ctx, q, p, envID, access.Ingest)
	return err
}

// foldPending folds every row ingested before it was called into the
// rollups: the idle folder and retention (which purges by the rollups) call
// it.
func (s *Service) foldPending(ctx context.Context) error {
	high, err := s.ingestBarrier(ctx)
	if err != nil {
		return err
	}
	return s.foldThrough(ctx, high)
}

// highWater holds the largest committed id per kind, or a watermark per
// kind.
type highWater struct{ impressions, events, summaries int64 }

// minus returns the rows of each kind from m up to h, none when m is ahead.
func (h highWater) minus(m highWater) [gateKinds]int64 {
	return [gateKinds]int64{
		gateImpressions: max(0, h.impressions-m.impressions),
		gateEvents:      max(0, h.events-m.events),
		gateSummaries:   max(0, h.summaries-m.summaries),
	}
}

// lookAtIds reads the largest committed ids and the watermarks without the
// fold's barrier: an estimate of the unfolded rows (ids a rolled-back
// ingest drew count too), which is all the folder's and the gate's
// decisions need.
func (s *Service) lookAtIds(ctx context.Context) (high, marks highWater, err error) {
	q := db.New(s.pool)
	h, err := q.GetIngestHighWater(ctx)
	if err != nil {
		return high, marks, err
	}
	m, err := q.GetRollupWatermarks(ctx)
	if err != nil {
		return high, marks, err
	}
	return highWater{impressions: h.Impressions, events: h.Events, summaries: h.Summaries},
		highWater{impressions: m.Impressions, events: m.Events, summaries: m.Summaries}, nil
}

// ingestBarrier waits until every ingest in flight has committed and
// returns the largest committed ids; later ingests draw larger ones.
func (s *Service) ingestBarrier(ctx context.Context) (highWater, error) {
	h, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (highWater, error) {
		if err := q.LockIngestExclusive(ctx); err != nil {
			return highWater{}, err
		}
		// A new statement, so a new snapshot: it sees every ingest the lock
		// waited for.
		row, err := q.GetIngestHighWater(ctx)
		return highWater{impressions: row.Impressions, events: row.Events, summaries: row.Summaries}, err
	})
	return h, store.AdaptError(err)
}

// foldThrough folds every kind up to h.
func (s *Service) foldThrough(ctx context.Context, h highWater) error {
	if err := s.foldKind(ctx, rollupImpressions, h.impressions); err != nil {
		return err
	}
	if err := s.foldKind(ctx, rollupSummaries, h.summaries); err != nil {
		return err
	}
	return s.foldKind(ctx, rollupEvents, h.events)
}

// foldKind folds the rows of one kind up to through, foldChunk ids per
// transaction. Another folder may have gone further meanwhile; then there
// is nothing left to do.
func (s *Service) foldKind(ctx context.Context, kind string, through int64) error {
	for {
		done, err := store.WithTxV(ctx, s.pool, func(q *db.Queries) (bool, error) {
			from, err := q.LockRollupWatermark(ctx, kind)
			if err != nil || from >= through {
				return true, err
			}
			if kind != rollupSummaries {
				// Both folds move experiment counts (experiment_counts.go).
				if err := q.LockExperimentCounts(ctx); err != nil {
					return false, err
				}
			}
			to := min(through, from+foldChunk)
			p := db.FoldImpressionsParams{AfterID: from, ThroughID: to}
			switch kind {
			case rollupImpressions:
				if err = q.InternImpressionKeys(ctx, db.InternImpressionKeysParams(p)); err == nil {
					err = q.FoldImpressions(ctx, p)
				}
			case rollupSummaries:
				err = q.FoldSummaries(ctx, db.FoldSummariesParams(p))
			default:
				err = q.FoldGoalEvents(ctx, db.FoldGoalEventsParams(p))
			}
			if err != nil {
				return false, err
			}
			return to >= through, q.SetRollupWatermark(ctx, db.SetRollupWatermarkParams{Kind: kind, FoldedThrough: to})
		})
		if err != nil {
			return store.AdaptError(err)
		}
		if done {
			return nil
		}
	}
}

// FolderConfig configures RunRollupFolder; its zero value works.
type FolderConfig struct {
	// Interval between looks at the backlog; 200 ms when 0.
	Interval time.Duration
	// MaxBacklog is the number of unfolded rows (of any kind) at which
	// the folder starts folding while ingest goes on; 5,000 when 0. Below
	// it the folder waits until ingest pauses for an interval. Reads add up
	// the unfolded rows themselves (read.go), so this is what a read scans
	// beyond the rollups while the folder keeps pace; the ingest gate
	// (gate.go) bounds it when the folder does not.
	MaxBacklog int64
}

func (c FolderConfig) withDefaults() FolderConfig {
	if c.Interval <= 0 {
		c.Interval = 200 * time.Millisecond
	}
	if c.MaxBacklog <= 0 {
		c.MaxBacklog = 5_000
	}
	return c
}

// While ingest goes on and the backlog is at least MaxBacklog, the folder
// folds activeChunk rows of each kind per turn, rests activeRest times as
// long as the turn took, and looks again at once rather than at the next
// tick: reads add up the unfolded tail (read.go), so the folder must keep
// pace with sustained ingest, taking up to four fifths of one core from it.
// When the backlog has reached the ingest gate's limit, or batches are
// held at it, ingest is waiting for the folder (gate.go): the folder does
// not rest, takes its turn even under MaxBacklog (still activeChunk rows of
// each kind at most), and wakes the held batches after each turn so that
// they look at the backlog again at once.
const (
	activeChunk = 20_000
	activeRest  = 0.25
)

// RunRollupFolder folds ingested rows into the rollups in the background
// until ctx ends: everything once ingest has been idle for an interval (the
// largest ids did not move), and in rationed turns while ingest goes on and
// the backlog is at least cfg.MaxBacklog.
func (s *Service) RunRollupFolder(ctx context.Context, cfg FolderConfig) {
	cfg = cfg.withDefaults()
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	var last highWater
	var rest <-chan time.Time // set after a rationed turn: look again when it fires
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if rest != nil {
				continue // resting after a rationed turn
			}
		case <-rest:
			rest = nil
		}
		start := time.Now()
		rationed, backlog, err := s.foldIfDue(ctx, cfg, &last)
		if err != nil && ctx.Err() == nil {
			s.logger.WarnContext(ctx, "fold rollups", slog.String("err", err.Error()))
		}
		switch {
		case !rationed || err != nil:
		case s.gate.holding() || s.gate.max > 0 && backlog >= s.gate.max:
			rest = time.After(0) // ingest waits at the gate: fold on
		default:
			rest = time.After(time.Duration(activeRest * float64(time.Since(start))))
		}
	}
}

// foldIfDue is one look of the folder: last is the high water seen at the
// previous look. It reports whether it took a rationed turn, and the
// largest backlog of a kind it saw before the turn.
func (s *Service) foldIfDue(ctx context.Context, cfg FolderConfig, last *highWater) (bool, int64, error) {
	now, marks, err := s.lookAtIds(ctx)
	if err != nil {
		return false, 0, err
	}
	tails := now.minus(marks)
	backlog := max(tails[gateImpressions], tails[gateEvents], tails[gateSummaries])
	idle := now == *last
	*last = now
	switch {
	case backlog <= 0:
		return false, backlog, nil
	case idle:
		err := s.foldPending(ctx)
		s.gate.foldedTurn()
		return false, backlog, err
	case backlog < cfg.MaxBacklog && !s.gate.holding():
		// Batches held at the gate wait for this folder: it takes a turn
		// rather than wait for the backlog to grow.
		return false, backlog, nil
	}
	h, err := s.ingestBarrier(ctx)
	if err != nil {
		return true, backlog, err
	}
	h.impressions = min(h.impressions, marks.impressions+activeChunk)
	h.events = min(h.events, marks.events+activeChunk)
	h.summaries = min(h.summaries, marks.summaries+activeChunk)
	err = s.foldThrough(ctx, h)
	s.gate.foldedTurn()
	return true, backlog, err
}
