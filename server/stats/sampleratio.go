package stats

import "math"

// SampleRatioLevel is the p-value below which a split of users counts as a
// sample-ratio mismatch. It is far stricter than SignificanceLevel because the
// check guards every experiment all the time, and a false alarm discredits a
// healthy experiment.
const SampleRatioLevel = 0.001

// SampleRatio is the outcome of CheckSampleRatio.
type SampleRatio struct {
	Users          int64   // users in both arms, N
	TreatmentUsers int64   // users in the treatment arm
	ExpectedShare  float64 // share of users the treatment should receive, q
	P              float64 // p-value of the split under the expected share
	Mismatch       bool    // Users ≥ the minimum and P < SampleRatioLevel
}

// CheckSampleRatio tests whether users split between treatment (treatment
// users) and control (control users) the way the assignment meant them to,
// the treatment receiving a share q of them. A split far from the intended
// one (a sample-ratio mismatch) means users are being lost or reassigned on
// one side, which biases every comparison of the two arms whatever their
// metrics say.
//
// It is Pearson's chi-squared goodness-of-fit test with one degree of
// freedom: with N = treatment + control, expected counts e_t = N q and
// e_c = N (1 − q),
//
//	χ² = (o_t − e_t)² / e_t + (o_c − e_c)² / e_c
//
// and, because a chi-squared variable with one degree of freedom is the square
// of a standard normal one, p = P(Z² ≥ χ²) = erfc(√(χ² / 2)).
//
// Mismatch needs at least minUsers users in all, so that a handful of early
// users cannot raise the alarm, and p below SampleRatioLevel. Without users
// the split is p = 1 and never a mismatch. q must lie strictly between 0 and
// 1; for any other q there is no split to test, and the result is p = 1 and
// no mismatch as well.
func CheckSampleRatio(treatment, control int64, q float64, minUsers int64) SampleRatio {
	n := treatment + control
	out := SampleRatio{Users: n, TreatmentUsers: treatment, ExpectedShare: q, P: 1}
	if n <= 0 || !(q > 0 && q < 1) {
		return out
	}
	nf := float64(n)
	et, ec := nf*q, nf*(1-q)
	dt, dc := float64(treatment)-et, float64(control)-ec
	chi2 := dt*dt/et + dc*dc/ec
	out.P = math.Erfc(math.Sqrt(chi2 / 2))
	out.Mismatch = n >= minUsers && out.P < SampleRatioLevel
	return out
}
