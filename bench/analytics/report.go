package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/switchyard/switchyard/sdkgo"
)

// report collects the figures of a run and prints them as one table.
type report struct {
	mismatches []string

	prodEvals, prodTriples int64
	prodWall, prodBehind   time.Duration
	prodCPU                cpuUse
	prodSDK                sdkgo.Stats
	prodWrites             tableWrites
	prodDayTriples         float64
	prodChecked            int

	seedTime, seedFold time.Duration
	queries            []readQuery
	idle               map[string][]time.Duration
	rows               int
	raw                time.Duration
	rawCPU             cpuUse
	alone, loaded      ingestResult
	ceiling            ingestResult // HTTP with no fold at all (ingestCeiling)
}

func (r *report) mismatch(s string) {
	r.mismatches = append(r.mismatches, s)
	fmt.Fprintf(os.Stderr, "MISMATCH: %s\n", s)
}

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func (r *report) print(o options) {
	line := strings.Repeat("=", 100)
	fmt.Println(line)
	fmt.Printf("Results (%s)\n", commandLine())
	fmt.Println(line)
	if r.prodEvals > 0 {
		E, F := float64(r.prodEvals), float64(r.prodTriples)
		var perUser, other int64
		for t, v := range r.prodWrites {
			if perUserTables[t] {
				perUser += v[0] + v[1]
			} else {
				other += v[0] + v[1]
			}
		}
		R := float64(perUser + other)
		a := float64(perUser) / F // rows per first-seen triple
		b := float64(other) / E   // rows per evaluation besides
		budget := (R - 3*F) / E
		dayE := float64(o.rate) * 86400
		dayRows := a*r.prodDayTriples + b*dayE
		fmt.Printf("1. Production shape: real Go SDK, %d flags, Zipf(s=%.2f) over %d users, %d evaluations/s for %s\n",
			len(prodFlags), o.zipfS, o.users, o.rate, o.duration)
		fmt.Printf("   %-62s %14d\n", "evaluations (E)", r.prodEvals)
		fmt.Printf("   %-62s %14d   (%.1f %% of E)\n", "first-seen (flag, user, value) (F)", r.prodTriples, 100*F/E)
		fmt.Printf("   %-62s %14d   (%.3f per evaluation)\n", "rows inserted + updated, all tables (R)", int64(R), R/E)
		fmt.Printf("   %-62s %14d\n", "  in per-user tables (impressions, exposures, variant users)", perUser)
		fmt.Printf("   %-62s %14d\n", "  in every other table", other)
		fmt.Printf("   %-62s %14.3f   target ≤ 3: %s\n", "rows per first-seen (per-user rows / F)", a, mark(a <= 3))
		fmt.Printf("   %-62s %14.5f   (1 per %.0f evaluations) target ≤ 1/50: %s\n", "rows per evaluation besides (other rows / E)", b, 1/b, mark(b <= 1.0/50))
		fmt.Printf("   %-62s %14.5f   target ≤ 0.02: %s\n", "budget form: (R − 3·F) / E", budget, mark(budget <= 1.0/50))
		fmt.Printf("   %-62s %14.0f   (%.0f users × %d flags seen in a day)\n", "a day at this rate: first-seen (population saturates)", r.prodDayTriples, r.prodDayTriples/float64(len(prodFlags)), len(prodFlags))
		fmt.Printf("   %-62s %14.0f   = %.3f × %.0f + %.5f × %.0f\n", "a day: rows ≈ per-first-seen × F_day + besides × E_day", dayRows, a, r.prodDayTriples, b, dayE)
		fmt.Printf("   %-62s %14.5f   (1 per %.0f evaluations; one impression per evaluation: ≥ 1)\n", "a day: rows per evaluation", dayRows/dayE, dayE/dayRows)
		c := r.prodCPU
		fmt.Printf("   %-62s %14s   (%.1f %% of one core over %s; %.1f µs per evaluation)\n", "server CPU (process, user+system)",
			c.server.Round(10*time.Millisecond), 100*c.server.Seconds()/c.wall.Seconds(), c.wall.Round(100*time.Millisecond), float64(c.server.Microseconds())/E)
		fmt.Printf("   %-62s %14s   (%.1f %% of one core; %.1f µs per evaluation)\n", "PostgreSQL CPU (backends of the scratch database)",
			c.postgres.Round(10*time.Millisecond), 100*c.postgres.Seconds()/c.wall.Seconds(), float64(c.postgres.Microseconds())/E)
		fmt.Printf("   %-62s %14s   (%.1f µs per evaluation)\n", "tool CPU (SDK evaluation and reporting, load generator)", c.tool.Round(10*time.Millisecond), float64(c.tool.Microseconds())/E)
		s := r.prodSDK
		fmt.Printf("   %-62s %14s   (impressions %d, summarised %d in %d summary rows, dropped %d + %d)\n", "SDK Stats()", "",
			s.ImpressionsSent, s.SummarisedSent, s.SummariesSent, s.ImpressionsDropped, s.SummarisedDropped)
		exact := "EXACT"
		if len(r.mismatches) > 0 {
			exact = fmt.Sprintf("MISMATCH (%d)", len(r.mismatches))
		}
		fmt.Printf("   %-62s %14s   (%d figures: stats, exposure variants/users/timeline, flag status)\n", "every statistic against the tool's count", exact, r.prodChecked)
		fmt.Printf("   per table (inserted + updated; deleted):\n")
		for _, t := range r.prodWrites.tables() {
			v := r.prodWrites[t]
			fmt.Printf("     %-36s %10d + %-10d  del %d\n", t, v[0], v[1], v[2])
		}
		fmt.Println()
	}
	if r.rows > 0 {
		rawRate := float64(r.rows) / r.raw.Seconds()
		fmt.Printf("2. Per-evaluation senders: %d writers, %d-item impression batches into one environment\n", o.writers, batchSize)
		fmt.Printf("   %-46s %9s %10s %9s %11s %14s\n", "", "rows", "rows/s", "of COPY", "time", "target ≥ 60 %")
		fmt.Printf("   %-46s %9d %10.0f %8s%% %11s\n", "raw pgx COPY (same table, no rollups)", r.rows, rawRate, "100", r.raw.Round(time.Millisecond))
		for _, x := range []struct {
			name string
			res  ingestResult
		}{{"HTTP", r.alone}, {fmt.Sprintf("HTTP + %d reader(s) (3.)", o.readers), r.loaded}} {
			ack := float64(x.res.rows) / x.res.acked.Seconds()
			vis := float64(x.res.rows) / x.res.visible.Seconds()
			fmt.Printf("   %-46s %9d %10.0f %8.0f%% %11s\n", x.name+", acknowledged", x.res.rows, ack, 100*ack/rawRate, x.res.acked.Round(time.Millisecond))
			fmt.Printf("   %-46s %9d %10.0f %8.0f%% %11s %14s\n", x.name+", visible (list total)", x.res.rows, vis, 100*vis/rawRate,
				x.res.visible.Round(time.Millisecond), mark(vis/rawRate >= 0.6))
		}
		if c := r.ceiling; c.rows > 0 {
			vis := float64(c.rows) / c.visible.Seconds()
			fmt.Printf("   %-46s %9d %10.0f %8.0f%% %11s\n", "HTTP with no fold at all, visible (ceiling)", c.rows, vis, 100*vis/rawRate, c.visible.Round(time.Millisecond))
		}
		fmt.Printf("   CPU per row (µs): %-28s %8s %10s %8s %8s %14s\n", "", "server", "PostgreSQL", "tool", "sum", "both cores busy")
		for _, x := range []struct {
			name string
			rows int
			c    cpuUse
		}{{"raw pgx COPY", r.rows, r.rawCPU}, {"HTTP", r.alone.rows, r.alone.cpu}, {"HTTP + reader(s)", r.loaded.rows, r.loaded.cpu}, {"HTTP with no fold at all", r.ceiling.rows, r.ceiling.cpu}} {
			if x.rows == 0 || x.c.wall == 0 {
				continue
			}
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 / float64(x.rows) }
			sum := x.c.server + x.c.postgres + x.c.tool
			fmt.Printf("   %-46s %8.1f %10.1f %8.1f %8.1f %13.0f%%\n", x.name, per(x.c.server), per(x.c.postgres), per(x.c.tool), per(sum),
				100*sum.Seconds()/x.c.wall.Seconds()/float64(runtime.NumCPU()))
		}
		fmt.Println("   (visible: from the first batch sent to the answer of the first GET …/impressions whose total includes every row sent;\n    HTTP + readers sends the batches again until -load-time has passed; the ceiling: a second server with\n    INGEST_MAX_UNFOLDED=0 while the tool holds folding off, into development: what HTTP ingest reaches before any fold;\n    CPU: user+system of the server process, of the PostgreSQL backends of the scratch database (not the checkpointer\n    or WAL writer) and of this tool, divided by the rows; busy: their sum over the wall time of both cores)")
		fmt.Println()
		fmt.Printf("3. Reads under load: %d impressions and %d goal events seeded (%s, fold after it %s); %d reader(s) cycling the three reads\n   while \"HTTP with readers\" above ingests into the same environment (%s)\n",
			o.seedImpressions, o.seedEvents, r.seedTime.Round(time.Second), r.seedFold.Round(time.Second), o.readers, r.loaded.visible.Round(time.Second))
		fmt.Printf("   %-32s %10s %6s %10s %10s %10s %12s\n", "query", "idle p50", "reads", "p50", "p99", "max", "p99 < 1 s")
		for _, q := range r.queries {
			ds := r.loaded.reads[q.name]
			fmt.Printf("   %-32s %10s %6d %10s %10s %10s %12s\n", q.name, ms(quantile(r.idle[q.name], 0.5)), len(ds),
				ms(quantile(ds, 0.5)), ms(quantile(ds, 0.99)), ms(quantile(ds, 1)), mark(len(ds) > 0 && quantile(ds, 0.99) < time.Second))
		}
		fmt.Println("   (reads that began before every ingested row was visible; idle: 5 reads before any ingest)")
	}
	if len(r.mismatches) > 0 {
		fmt.Println()
		fmt.Println("!!!!!!!! STATISTICS DO NOT MATCH THE TOOL'S COUNT:")
		for _, m := range r.mismatches {
			fmt.Println("   " + m)
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
