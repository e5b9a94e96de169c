package stats

// Summary is one arm of an experiment reduced to a per-user metric: how many
// users it holds, the mean of the metric over those users, and its variance.
// Each user contributes one value, so Users is also the number of
// observations.
type Summary struct {
	Users    int64
	Mean     float64
	Variance float64
}

// ConversionSummary summarises a conversion metric, where each user's value
// is 1 when they converted and 0 otherwise: of users users, converted
// converted. The mean is the conversion rate m = converted / users and the
// variance that of a 0/1 value with that mean, m (1 − m). An arm without
// users has mean 0 and variance 0.
func ConversionSummary(users, converted int64) Summary {
	if users <= 0 {
		return Summary{}
	}
	m := float64(converted) / float64(users)
	return Summary{Users: users, Mean: m, Variance: m * (1 - m)}
}

// MeanSummary summarises a metric that averages a per-user value x from its
// aggregates: the number of users, Σx and Σx². The mean is Σx / users and the
// variance the sample variance with divisor users − 1,
//
//	(Σx² − (Σx)² / users) / (users − 1),
//
// which is 0 for fewer than two users. The subtraction can come out slightly
// below zero in floating point when every value is (nearly) the same, and a
// variance is never negative, so it is clamped at 0. An arm without users has
// mean 0 and variance 0.
func MeanSummary(users int64, sum, sumSquares float64) Summary {
	if users <= 0 {
		return Summary{}
	}
	n := float64(users)
	s := Summary{Users: users, Mean: sum / n}
	if users >= 2 {
		s.Variance = max(0, (sumSquares-sum*sum/n)/(n-1))
	}
	return s
}
