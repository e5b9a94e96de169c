package stats_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/switchyard/switchyard/server/stats"
)

// vectors is testdata/sequential_vectors.json, computed by
// testdata/sequential_vectors.py independently of this package.
type vectors struct {
	Sequential []struct {
		Name               string
		Alpha              float64
		Treatment, Control struct {
			Users     int64
			Converted *int64
			Sum       float64
			SumSq     float64 `json:"sum_sq"`
		}
		Want struct {
			Lift, SE, Lower, Upper, P *float64
			TreatmentMean             float64 `json:"treatment_mean"`
			TreatmentVariance         float64 `json:"treatment_variance"`
			ControlMean               float64 `json:"control_mean"`
			ControlVariance           float64 `json:"control_variance"`
		}
		Checks []struct {
			Direction stats.Direction
			Tolerance float64
			MinUsers  int64 `json:"min_users"`
			Regressed bool
		}
	}
	SampleRatio []struct {
		Name               string
		Treatment, Control int64
		Share              float64
		MinUsers           int64 `json:"min_users"`
		Want               struct {
			Users    int64
			P        float64
			Mismatch bool
		}
	} `json:"sample_ratio"`
}

func loadVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/sequential_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Sequential) < 12 || len(v.SampleRatio) < 5 {
		t.Fatalf("only %d sequential and %d sample-ratio vectors", len(v.Sequential), len(v.SampleRatio))
	}
	return v
}

// near reports whether got equals want within 1e-6 relative, or 1e-12
// absolute near zero.
func near(got, want float64) bool {
	return math.Abs(got-want) <= max(1e-6*math.Abs(want), 1e-12)
}

func checkClose(t *testing.T, name string, got, want *float64) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s = %v, want undefined", name, *got)
	case want != nil && got == nil:
		t.Errorf("%s undefined, want %v", name, *want)
	case want != nil && !near(*got, *want):
		t.Errorf("%s = %.15g, want %.15g", name, *got, *want)
	}
}

func TestCompareSequentialVectors(t *testing.T) {
	t.Parallel()
	for _, tt := range loadVectors(t).Sequential {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			var tr, co stats.Summary
			if tt.Treatment.Converted != nil {
				tr = stats.ConversionSummary(tt.Treatment.Users, *tt.Treatment.Converted)
				co = stats.ConversionSummary(tt.Control.Users, *tt.Control.Converted)
			} else {
				tr = stats.MeanSummary(tt.Treatment.Users, tt.Treatment.Sum, tt.Treatment.SumSq)
				co = stats.MeanSummary(tt.Control.Users, tt.Control.Sum, tt.Control.SumSq)
			}
			checkClose(t, "treatment mean", &tr.Mean, &tt.Want.TreatmentMean)
			checkClose(t, "treatment variance", &tr.Variance, &tt.Want.TreatmentVariance)
			checkClose(t, "control mean", &co.Mean, &tt.Want.ControlMean)
			checkClose(t, "control variance", &co.Variance, &tt.Want.ControlVariance)

			got := stats.CompareSequential(tr, co, tt.Alpha)
			checkClose(t, "lift", got.Lift, tt.Want.Lift)
			checkClose(t, "se", got.SE, tt.Want.SE)
			checkClose(t, "lower", got.Lower, tt.Want.Lower)
			checkClose(t, "upper", got.Upper, tt.Want.Upper)
			checkClose(t, "p", got.P, tt.Want.P)
			for _, c := range tt.Checks {
				if r := got.Regressed(c.Direction, c.Tolerance, c.MinUsers); r != c.Regressed {
					t.Errorf("Regressed(%s, %v, %d) = %v, want %v", c.Direction, c.Tolerance, c.MinUsers, r, c.Regressed)
				}
			}
		})
	}
}

func TestCheckSampleRatioVectors(t *testing.T) {
	t.Parallel()
	for _, tt := range loadVectors(t).SampleRatio {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			got := stats.CheckSampleRatio(tt.Treatment, tt.Control, tt.Share, tt.MinUsers)
			if got.Users != tt.Want.Users || got.TreatmentUsers != tt.Treatment || got.ExpectedShare != tt.Share {
				t.Errorf("got %+v for %d/%d at %v", got, tt.Treatment, tt.Control, tt.Share)
			}
			checkClose(t, "p", &got.P, &tt.Want.P)
			if got.Mismatch != tt.Want.Mismatch {
				t.Errorf("mismatch = %v, want %v (p %v)", got.Mismatch, tt.Want.Mismatch, got.P)
			}
		})
	}
}

func TestCheckSampleRatioBadShare(t *testing.T) {
	t.Parallel()
	for _, q := range []float64{0, 1, -0.5, 2, math.NaN()} {
		if got := stats.CheckSampleRatio(900, 100, q, 0); got.P != 1 || got.Mismatch {
			t.Errorf("share %v: %+v, want p 1 and no mismatch", q, got)
		}
	}
}

// TestConfidenceSequenceNarrows: for a fixed effect (fixed means and
// variances, equal arms), the interval shrinks as users accumulate.
func TestConfidenceSequenceNarrows(t *testing.T) {
	t.Parallel()
	for _, alpha := range []float64{0.01, 0.05, 0.2} {
		prev := math.Inf(1)
		for n := int64(10); n <= 100_000_000; n = n * 3 / 2 {
			s := stats.CompareSequential(stats.ConversionSummary(n, n*11/100), stats.Summary{Users: n, Mean: 0.1, Variance: 0.09}, alpha)
			if s.Lower == nil {
				t.Fatalf("alpha %v n %d: interval undefined", alpha, n)
			}
			width := *s.Upper - *s.Lower
			if !(width < prev) {
				t.Errorf("alpha %v: width %v at %d users per arm, not below %v", alpha, width, n, prev)
			}
			prev = width
		}
	}
}

// TestAlwaysValidP: the p-value never exceeds 1, is symmetric in the sign of
// the estimate, falls as the estimate moves away from 0 (fixed users and
// standard error) and is below alpha exactly when the interval excludes 0.
func TestAlwaysValidP(t *testing.T) {
	t.Parallel()
	for _, alpha := range []float64{0.01, 0.05, 0.2} {
		for _, users := range []int64{20, 5_000, 2_000_000} {
			const se = 0.03
			prev := 2.0
			for i := range 400 {
				est := float64(i) * 0.002
				lower, upper, p, ok := stats.AlwaysValid(est, se, users, alpha)
				if !ok {
					t.Fatalf("AlwaysValid(%v, %v, %d, %v) not ok", est, se, users, alpha)
				}
				if p > 1 || p < 0 {
					t.Errorf("p = %v out of [0, 1] at estimate %v", p, est)
				}
				if p > prev || (prev < 1 && p > 0 && p >= prev) {
					t.Errorf("alpha %v users %d: p %v at estimate %v, not below %v", alpha, users, p, est, prev)
				}
				prev = p
				_, _, pNeg, _ := stats.AlwaysValid(-est, se, users, alpha)
				if !near(pNeg, p) {
					t.Errorf("p(-%v) = %v, p(%v) = %v", est, pNeg, est, p)
				}
				if excludes := lower > 0 || upper < 0; excludes != (p < alpha) {
					t.Errorf("estimate %v: interval [%v, %v], p %v, alpha %v", est, lower, upper, p, alpha)
				}
			}
		}
	}
}

func TestAlwaysValidUndefined(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		est, se, alph float64
		users         int64
	}{
		{"se 0", 0.1, 0, 0.05, 100},
		{"se negative", 0.1, -1, 0.05, 100},
		{"se NaN", 0.1, math.NaN(), 0.05, 100},
		{"se infinite", 0.1, math.Inf(1), 0.05, 100},
		{"no users", 0.1, 0.1, 0.05, 0},
		{"alpha 0", 0.1, 0.1, 0, 100},
		{"alpha 1", 0.1, 0.1, 1, 100},
		{"estimate NaN", math.NaN(), 0.1, 0.05, 100},
	} {
		if _, _, _, ok := stats.AlwaysValid(tt.est, tt.se, tt.users, tt.alph); ok {
			t.Errorf("%s: ok", tt.name)
		}
	}
	s := stats.CompareSequential(stats.ConversionSummary(100, 10), stats.ConversionSummary(100, 20), 1.5)
	if s.Lift == nil || s.SE == nil || s.Lower != nil || s.Upper != nil || s.P != nil {
		t.Errorf("alpha 1.5: %+v, want lift and se only", s)
	}
}

func TestRegressedDirection(t *testing.T) {
	t.Parallel()
	worse := stats.CompareSequential(stats.ConversionSummary(100_000, 8_000), stats.ConversionSummary(100_000, 10_000), 0.05)
	if !worse.Regressed(stats.Decrease, 0.05, 1_000) {
		t.Errorf("a 20%% fall did not regress beyond 5%%: %v..%v", *worse.Lower, *worse.Upper)
	}
	for _, tt := range []struct {
		name      string
		bad       stats.Direction
		tolerance float64
		minUsers  int64
	}{
		{"rise is not bad for a fall", stats.Increase, 0, 0},
		{"beyond the tolerance", stats.Decrease, 0.5, 0},
		{"too few users", stats.Decrease, 0, 100_001},
		{"unknown direction", "sideways", 0, 0},
	} {
		if worse.Regressed(tt.bad, tt.tolerance, tt.minUsers) {
			t.Errorf("%s: regressed", tt.name)
		}
	}
	if (stats.Sequential{TreatmentUsers: 10, ControlUsers: 10}).Regressed(stats.Increase, -1, 0) {
		t.Error("undefined interval regressed")
	}
}

func TestSummaries(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		got  stats.Summary
		want stats.Summary
	}{
		{"conversion empty", stats.ConversionSummary(0, 0), stats.Summary{}},
		{"conversion", stats.ConversionSummary(4, 1), stats.Summary{Users: 4, Mean: 0.25, Variance: 0.1875}},
		{"mean empty", stats.MeanSummary(0, 0, 0), stats.Summary{}},
		{"mean one user", stats.MeanSummary(1, 7, 49), stats.Summary{Users: 1, Mean: 7}},
		// 1, 2, 3, 6: mean 3, sample variance (50 − 144/4) / 3 = 14/3.
		{"mean", stats.MeanSummary(4, 12, 50), stats.Summary{Users: 4, Mean: 3, Variance: 14.0 / 3}},
	} {
		if tt.got.Users != tt.want.Users || !near(tt.got.Mean, tt.want.Mean) || !near(tt.got.Variance, tt.want.Variance) {
			t.Errorf("%s = %+v, want %+v", tt.name, tt.got, tt.want)
		}
	}
}
