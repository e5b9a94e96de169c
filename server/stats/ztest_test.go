package stats_test

import (
	"math"
	"testing"

	"github.com/switchyard/switchyard/server/stats"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		variant, control stats.Arm
		// want* are nil when the value must be undefined.
		wantUplift, wantZ, wantP *float64
		wantSignificant          bool
	}{
		{
			// Textbook case: 200/1000 vs 150/1000, pooled p = 0.175.
			// z = 0.05 / sqrt(0.175·0.825·0.002) = 2.9424; p = 0.003258.
			name:    "significant lift",
			variant: stats.Arm{Exposed: 1000, Converted: 200}, control: stats.Arm{Exposed: 1000, Converted: 150},
			wantUplift: ptr(1.0 / 3), wantZ: ptr(2.942449), wantP: ptr(0.0032574), wantSignificant: true,
		},
		{
			// 11/100 vs 10/100: z = 0.01/sqrt(0.105·0.895·0.02) = 0.230664; p = 0.817576.
			name:    "not significant",
			variant: stats.Arm{Exposed: 100, Converted: 11}, control: stats.Arm{Exposed: 100, Converted: 10},
			wantUplift: ptr(0.1), wantZ: ptr(0.230664), wantP: ptr(0.817576),
		},
		{
			name:    "negative lift",
			variant: stats.Arm{Exposed: 1000, Converted: 150}, control: stats.Arm{Exposed: 1000, Converted: 200},
			wantUplift: ptr(-0.25), wantZ: ptr(-2.942449), wantP: ptr(0.0032574), wantSignificant: true,
		},
		{
			name:    "control never converts",
			variant: stats.Arm{Exposed: 10, Converted: 2}, control: stats.Arm{Exposed: 10},
			// pooled 0.1: z = 0.2/sqrt(0.1·0.9·0.2) = 1.490712; uplift undefined.
			wantZ: ptr(1.490712), wantP: ptr(0.136037),
		},
		{
			name:    "nobody converts",
			variant: stats.Arm{Exposed: 10}, control: stats.Arm{Exposed: 10},
		},
		{
			name:    "everybody converts",
			variant: stats.Arm{Exposed: 10, Converted: 10}, control: stats.Arm{Exposed: 5, Converted: 5},
			wantUplift: ptr(0),
		},
		{
			name:    "empty variant",
			variant: stats.Arm{}, control: stats.Arm{Exposed: 5, Converted: 1},
			wantUplift: ptr(-1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := stats.Compare(tt.variant, tt.control)
			check(t, "uplift", got.Uplift, tt.wantUplift)
			check(t, "z", got.Z, tt.wantZ)
			check(t, "p", got.P, tt.wantP)
			if got.Significant != tt.wantSignificant {
				t.Errorf("significant = %v, want %v", got.Significant, tt.wantSignificant)
			}
		})
	}
}

func TestPValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ z, want float64 }{
		{0, 1}, {1.959964, 0.05}, {-1.959964, 0.05}, {2.575829, 0.01}, {1, 0.3173105},
	} {
		if got := stats.PValue(tt.z); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("PValue(%v) = %v, want %v", tt.z, got, tt.want)
		}
	}
}

func TestRate(t *testing.T) {
	t.Parallel()
	if got := (stats.Arm{}).Rate(); got != 0 {
		t.Errorf("empty arm rate = %v", got)
	}
	if got := (stats.Arm{Exposed: 4, Converted: 1}).Rate(); got != 0.25 {
		t.Errorf("rate = %v", got)
	}
}

func ptr(f float64) *float64 { return &f }

func check(t *testing.T, name string, got, want *float64) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s = %v, want undefined", name, *got)
	case want != nil && got == nil:
		t.Errorf("%s undefined, want %v", name, *want)
	case want != nil && math.Abs(*got-*want) > 1e-5:
		t.Errorf("%s = %.7f, want %.7f", name, *got, *want)
	}
}
