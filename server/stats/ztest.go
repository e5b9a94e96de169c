package stats

import "math"

// SignificanceLevel is the significance gate: a difference is significant
// when its p-value is below it (docs/reference/limits.md, Significance).
const SignificanceLevel = 0.05

// Arm is one variant of an experiment: users exposed to it and, of those,
// users who converted.
type Arm struct {
	Exposed   int64
	Converted int64
}

// Rate is the arm's conversion rate, converted/exposed, or 0 for an arm
// nobody was exposed to.
func (a Arm) Rate() float64 {
	if a.Exposed <= 0 {
		return 0
	}
	return float64(a.Converted) / float64(a.Exposed)
}

// Comparison is a variant measured against the control. A nil field is
// undefined, null in the answer (docs/reference/measurement.md, Experiment
// results).
type Comparison struct {
	Uplift      *float64 // (rate − control rate) / control rate; nil when the control rate is 0
	Z           *float64 // pooled two-proportion z-score; nil when undefined
	P           *float64 // two-sided p-value of Z; nil when Z is nil
	Significant bool     // P < SignificanceLevel
}

// Compare measures variant against control. The z-score uses the pooled
// proportion p = (c1 + c2) / (n1 + n2):
//
//	z = (r1 − r2) / sqrt(p (1 − p) (1/n1 + 1/n2))
//
// It is undefined when either arm is empty or p is 0 or 1 (no variance).
// The p-value is two-sided from the standard normal: P(|Z| ≥ |z|) =
// erfc(|z| / √2).
func Compare(variant, control Arm) Comparison {
	var c Comparison
	vr, cr := variant.Rate(), control.Rate()
	if cr > 0 {
		u := (vr - cr) / cr
		c.Uplift = &u
	}
	if variant.Exposed <= 0 || control.Exposed <= 0 {
		return c
	}
	n1, n2 := float64(variant.Exposed), float64(control.Exposed)
	pooled := float64(variant.Converted+control.Converted) / (n1 + n2)
	if pooled <= 0 || pooled >= 1 {
		return c
	}
	se := math.Sqrt(pooled * (1 - pooled) * (1/n1 + 1/n2))
	z := (vr - cr) / se
	p := PValue(z)
	c.Z, c.P = &z, &p
	c.Significant = p < SignificanceLevel
	return c
}

// PValue is the two-sided p-value of a standard normal score z.
func PValue(z float64) float64 {
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}
