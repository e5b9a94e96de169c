package stats

import "math"

// sequentialTuningUsers is the total number of users, over both arms, at
// which the confidence sequence is tightest: the mixing parameter ρ is chosen
// for it (AlwaysValid). Before it the interval is a little wider than it could
// be, after it the interval keeps shrinking, only a little more slowly than an
// optimally tuned one.
const sequentialTuningUsers = 5000

// Sequential is a treatment arm compared with the control on the relative
// lift of a per-user metric, in a form that stays valid however often it is
// read (CompareSequential). A nil field is undefined, null in an answer.
type Sequential struct {
	Lift  *float64 // treatment mean / control mean − 1
	SE    *float64 // standard error of Lift (delta method)
	Lower *float64 // lower end of the confidence sequence around Lift
	Upper *float64 // upper end of the confidence sequence around Lift
	P     *float64 // always-valid p-value for "no lift"

	// TreatmentUsers and ControlUsers are the arms' sizes, kept for
	// Regressed.
	TreatmentUsers, ControlUsers int64
}

// CompareSequential compares treatment t with control c on the relative lift
// of their means, lift = m_t / m_c − 1, at error rate alpha.
//
// The lift's standard error comes from the delta method: a ratio of two
// independent means varies, to first order, as
//
//	se² = v_t / (n_t m_c²) + v_c m_t² / (n_c m_c⁴)
//
// where n is an arm's users, m its mean and v its variance. The interval and
// the p-value are AlwaysValid's for that estimate and standard error with
// n_t + n_c users.
//
// Undefined cases: Lift and SE are nil when the control's mean is 0 (there is
// nothing to be relative to) or either arm has fewer than two users (no
// variance to speak of). When the lift is defined but its standard error is
// 0, SE is 0 and Lower, Upper and P are nil: with no noise the sampling model
// behind the interval says nothing, and a zero-width interval or a p-value of
// 0 would claim a certainty the data cannot give. That happens when the
// treatment has no variance and either the control has none either or the
// treatment's mean is 0; for conversions, when nobody in the treatment
// converted, or everybody in both arms did.
// Lower, Upper and P are also nil when alpha is not strictly between 0 and 1.
func CompareSequential(t, c Summary, alpha float64) Sequential {
	out := Sequential{TreatmentUsers: t.Users, ControlUsers: c.Users}
	if c.Mean == 0 || t.Users < 2 || c.Users < 2 {
		return out
	}
	lift := t.Mean/c.Mean - 1
	nt, nc, mt, mc := float64(t.Users), float64(c.Users), t.Mean, c.Mean
	se := math.Sqrt(t.Variance/(nt*mc*mc) + c.Variance*mt*mt/(nc*mc*mc*mc*mc))
	if math.IsNaN(lift) || math.IsInf(lift, 0) || math.IsNaN(se) || math.IsInf(se, 0) {
		return out
	}
	out.Lift, out.SE = &lift, &se
	if lower, upper, p, ok := AlwaysValid(lift, se, t.Users+c.Users, alpha); ok {
		out.Lower, out.Upper, out.P = &lower, &upper, &p
	}
	return out
}

// AlwaysValid is the two-sided asymptotic confidence sequence around an
// estimate with standard error se after users observations, with its
// always-valid p-value for the hypothesis that the true value is 0
// (Waudby-Smith et al., "Time-uniform central limit theory and asymptotic
// confidence sequences", 2023, arXiv:2103.06476: equation 9 for the
// interval, and for the p-value the inverse of the e-value of equation 155).
//
// An ordinary 95% interval is right 95% of the time when it is computed once,
// at a sample size fixed in advance. Read every day and acted on the first
// day it excludes 0, it is wrong far more often, because each read is another
// chance for noise to cross the line. A confidence sequence is wider by a
// factor that grows slowly (like √log) with the sample, and in exchange the
// chance that it ever excludes the true value, at any of the reads, however
// many, is at most alpha. The guarantee is asymptotic, like the normal
// approximation behind an ordinary z-test: it holds as the arms grow, and
// only roughly for a few dozen users.
//
// With N = users, the per-observation spread s² = se² N, and the mixing
// parameter ρ² = (−2 ln α + ln(−2 ln α + 1)) / 5000 (which makes the interval
// tightest at 5,000 observations), the half-width is
//
//	h = s √( 2 (N ρ² + 1) ln(√(N ρ² + 1) / α) / (N ρ)² )
//
// and the interval is estimate ± h. The p-value is
//
//	p = min(1, √(N ρ² + 1) exp(−ρ² z² / (2 (N ρ² + 1)))),  z² = estimate² N / se²,
//
// one over a running bet against "the true value is 0" that grows as the
// evidence does. It is below alpha exactly when the interval excludes 0, and
// the chance that it ever falls below alpha while the true value is 0 is at
// most alpha, in the same asymptotic sense.
//
// ok is false, and the results meaningless, when se is not a finite number
// above 0, users is below 1, the estimate is not finite or alpha is not
// strictly between 0 and 1.
func AlwaysValid(estimate, se float64, users int64, alpha float64) (lower, upper, p float64, ok bool) {
	if !(se > 0) || math.IsInf(se, 0) || users < 1 || math.IsNaN(estimate) || math.IsInf(estimate, 0) ||
		!(alpha > 0 && alpha < 1) {
		return 0, 0, 0, false
	}
	n := float64(users)
	l := -2 * math.Log(alpha)
	rho2 := (l + math.Log(l+1)) / sequentialTuningUsers
	rho := math.Sqrt(rho2)
	s := math.Sqrt(se * se * n)
	g := n*rho2 + 1 // N ρ² + 1
	h := s * math.Sqrt(2*g*math.Log(math.Sqrt(g)/alpha)/((n*rho)*(n*rho)))
	z2 := estimate * estimate * n / (se * se)
	p = min(1, math.Sqrt(g)*math.Exp(-rho2*z2/(2*g)))
	return estimate - h, estimate + h, p, true
}

// Direction is the way a metric moves when a change makes things worse.
type Direction string

// The bad directions: for a latency or error metric a rise is bad
// (Increase), for a conversion or revenue metric a fall is (Decrease).
const (
	Increase Direction = "increase"
	Decrease Direction = "decrease"
)

// Regressed reports whether the comparison shows the treatment worse than the
// control beyond tolerance, a relative lift (0.02 is 2%), with the error rate
// of the confidence sequence however often it is asked. It holds when both
// arms have at least minUsers users, the interval is defined (so the standard
// error is above 0), and the whole interval lies on the bad side of the
// tolerance: for Increase its lower end is above tolerance, for Decrease its
// upper end is below −tolerance. Any other direction never regresses.
func (s Sequential) Regressed(bad Direction, tolerance float64, minUsers int64) bool {
	if s.TreatmentUsers < minUsers || s.ControlUsers < minUsers || s.Lower == nil || s.Upper == nil {
		return false
	}
	switch bad {
	case Increase:
		return *s.Lower > tolerance
	case Decrease:
		return *s.Upper < -tolerance
	}
	return false
}
