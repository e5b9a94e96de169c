package main

import (
	"fmt"
	"os"
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

	queries   []readQuery
	scenarios []*scenario
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
		budget := (R - 2*F) / E
		dayE := float64(o.rate) * 86400
		dayRows := a*r.prodDayTriples + b*dayE
		fmt.Printf("1. Production shape: real Go SDK, %d flags, Zipf(s=%.2f) over %d users, %d evaluations/s for %s\n",
			len(prodFlags), o.zipfS, o.users, o.rate, o.duration)
		fmt.Printf("   %-62s %14d\n", "evaluations (E)", r.prodEvals)
		fmt.Printf("   %-62s %14d   (%.1f %% of E)\n", "first-seen (flag, user, value) (F)", r.prodTriples, 100*F/E)
		fmt.Printf("   %-62s %14d   (%.3f per evaluation)\n", "rows inserted + updated, all tables (R)", int64(R), R/E)
		fmt.Printf("   %-62s %14d\n", "  in per-user tables (impressions, impression_users)", perUser)
		fmt.Printf("   %-62s %14d\n", "  in every other table", other)
		fmt.Printf("   %-62s %14.3f   target ≤ 2: %s\n", "rows per first-seen (per-user rows / F)", a, mark(a <= 2))
		fmt.Printf("   %-62s %14.5f   (1 per %.0f evaluations) target ≤ 1/50: %s\n", "rows per evaluation besides (other rows / E)", b, 1/b, mark(b <= 1.0/50))
		fmt.Printf("   %-62s %14.5f   target ≤ 0.02: %s\n", "budget form: (R − 2·F) / E", budget, mark(budget <= 1.0/50))
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
	for _, sc := range r.scenarios {
		sc.print(o, r.queries)
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
