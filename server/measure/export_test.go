package measure

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeRows is a table of ids, of which inRange are the export's rows: the
// walk's reads are answered from it and recorded.
type fakeRows struct {
	inRange []int64 // ascending
	reads   [][2]int64
	limits  []int32
	failAt  int // the read (1-based) that fails; 0: none
}

var errRead = errors.New("read failed")

func (f *fakeRows) export() *Export[int64] {
	return &Export[int64]{
		first: f.inRange[0], last: f.inRange[len(f.inRange)-1],
		fetch: func(ctx context.Context, after, through int64, limit int32) ([]int64, error) {
			f.reads = append(f.reads, [2]int64{after, through})
			f.limits = append(f.limits, limit)
			if len(f.reads) == f.failAt {
				return nil, errRead
			}
			var out []int64
			for _, id := range f.inRange {
				if id > after && id <= through && len(out) < int(limit) {
					out = append(out, id)
				}
			}
			return out, nil
		},
		id: func(id int64) int64 { return id },
	}
}

// The walk hands over every row of the range once, in id order, in
// batches of at most exportBatch, and no read spans more than exportSpan
// ids: dense stretches end reads at the row limit, sparse ones at the span.
func TestExportWalksEveryRowInBoundedReads(t *testing.T) {
	t.Parallel()
	var ids []int64
	for id := int64(1_000); id < 40_000; id++ { // dense: 39,000 rows
		ids = append(ids, id)
	}
	for id := int64(40_000); id < 700_000; id += 97 { // sparse: one id in 97
		ids = append(ids, id)
	}
	ids = append(ids, 1_500_000) // and one far beyond a gap of 800,000 ids
	f := &fakeRows{inRange: ids}
	var got []int64
	batches := 0
	err := f.export().Each(context.Background(), func(rows []int64) error {
		if len(rows) == 0 || len(rows) > exportBatch {
			t.Errorf("batch of %d rows, want 1 to %d", len(rows), exportBatch)
		}
		batches++
		got = append(got, rows...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ids, got); d != "" {
		t.Fatalf("rows (-want +got):\n%s", d)
	}
	for i, r := range f.reads {
		if r[1]-r[0] > exportSpan || r[1] <= r[0] {
			t.Errorf("read %d covers ids (%d, %d]: more than %d ids or none", i, r[0], r[1], exportSpan)
		}
		if i > 0 && r[0] < f.reads[i-1][0] {
			t.Errorf("read %d starts at %d, before read %d (%d)", i, r[0], i-1, f.reads[i-1][0])
		}
		if f.limits[i] != exportBatch {
			t.Errorf("read %d limit %d, want %d", i, f.limits[i], exportBatch)
		}
	}
	if last := f.reads[len(f.reads)-1]; last[1] != ids[len(ids)-1] {
		t.Errorf("last read ends at %d, want the last id %d", last[1], ids[len(ids)-1])
	}
	// 39,000 dense rows take 8 reads; 660,000 sparse ids at most 7 more;
	// the gap to the last row 8 at most.
	if len(f.reads) > 30 || batches > len(f.reads) {
		t.Errorf("%d reads for %d batches", len(f.reads), batches)
	}
}

// A range without rows reads nothing and hands over nothing.
func TestExportOfNoRows(t *testing.T) {
	t.Parallel()
	e := &Export[int64]{first: 1, last: 0, fetch: func(context.Context, int64, int64, int32) ([]int64, error) {
		t.Error("read an empty export")
		return nil, nil
	}}
	if err := e.Each(context.Background(), func([]int64) error {
		t.Error("handed over rows of an empty export")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A failed read ends the walk with its error, after the batches before it;
// a failing fn ends it with fn's error, and the reader stops.
func TestExportStopsAtAFailure(t *testing.T) {
	t.Parallel()
	ids := make([]int64, 3*exportBatch)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	t.Run("read", func(t *testing.T) {
		t.Parallel()
		f := &fakeRows{inRange: ids, failAt: 2}
		var got []int64
		err := f.export().Each(context.Background(), func(rows []int64) error {
			got = append(got, rows...)
			return nil
		})
		if !errors.Is(err, errRead) {
			t.Fatalf("err = %v, want the read's", err)
		}
		if !slices.Equal(got, ids[:exportBatch]) {
			t.Errorf("handed over %d rows before the failure, want the first batch", len(got))
		}
	})
	t.Run("fn", func(t *testing.T) {
		t.Parallel()
		f := &fakeRows{inRange: ids}
		errStop := errors.New("client gone")
		calls := 0
		err := f.export().Each(context.Background(), func([]int64) error {
			calls++
			return errStop
		})
		if !errors.Is(err, errStop) || calls != 1 {
			t.Fatalf("err = %v after %d calls, want fn's after 1", err, calls)
		}
		// Each returns only once the reader has: its reads are done.
		// At most the batch handed over, the one waiting behind it and the
		// one being read when fn failed.
		if n := len(f.reads); n > 3 {
			t.Errorf("%d reads, want at most 3", n)
		}
	})
}

// A cancelled context ends a walk whose read is waiting.
func TestExportStopsWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	e := &Export[int64]{first: 1, last: 10,
		fetch: func(ctx context.Context, _, _ int64, _ int32) ([]int64, error) {
			cancel()
			<-ctx.Done()
			return nil, ctx.Err()
		},
		id: func(id int64) int64 { return id },
	}
	done := make(chan error, 1)
	go func() { done <- e.Each(ctx, func([]int64) error { return nil }) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Each did not return after its context ended")
	}
}

func TestCeilMicro(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ in, want time.Time }{
		{base, base},
		{base.Add(time.Microsecond), base.Add(time.Microsecond)},
		{base.Add(time.Nanosecond), base.Add(time.Microsecond)},
		{base.Add(1500 * time.Nanosecond), base.Add(2 * time.Microsecond)},
		{base.Add(-time.Nanosecond), base},
	} {
		if got := ceilMicro(tt.in); !got.Equal(tt.want) {
			t.Errorf("ceilMicro(%s) = %s, want %s", tt.in.Format(time.RFC3339Nano), got.Format(time.RFC3339Nano), tt.want.Format(time.RFC3339Nano))
		}
	}
}

// A range that covers at least half of the table's time walks the whole
// table; a shorter one is bounded exactly first.
func TestCoversMost(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	first, last := day(0), day(30)
	for _, tt := range []struct {
		name     string
		from, to time.Time
		want     bool
	}{
		{"everything and more", day(-100), day(100), true},
		{"exactly the table", first, last, true},
		{"the later half", day(15), day(40), true},
		{"the earlier half", day(-5), day(15), true},
		{"a day", day(10), day(11), false},
		{"just under half", day(0), day(15).Add(-time.Hour), false},
		{"before the table", day(-30), day(-1), false},
		{"after the table", day(31), day(60), false},
		{"one row, inside", day(-1), day(1), true},
	} {
		l := last
		if tt.name == "one row, inside" {
			l = first
		}
		if got := coversMost(tt.from, tt.to, first, l); got != tt.want {
			t.Errorf("%s: coversMost = %v, want %v", tt.name, got, tt.want)
		}
	}
}
