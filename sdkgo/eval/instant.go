package eval

import (
	"encoding/json"
	"math"
	"math/bits"
)

// instant is a point in time at nanosecond precision: seconds since the Unix epoch and the
// nanoseconds within that second (0 to 999,999,999). Two int64 nanosecond counts would not
// reach the years 0000 to 9999 that docs/reference/evaluation.md, Instants, allows.
type instant struct {
	sec  int64
	nsec int64
}

// The instants docs/reference/evaluation.md, Instants, allows: years 0000 to 9999, in UTC.
const (
	minInstantSec = -62167219200 // 0000-01-01T00:00:00Z
	maxInstantSec = 253402300799 // 9999-12-31T23:59:59Z
)

func (t instant) valid() bool { return minInstantSec <= t.sec && t.sec <= maxInstantSec }

func compareInstants(a, b instant) int {
	switch {
	case a.sec < b.sec:
		return -1
	case a.sec > b.sec:
		return 1
	case a.nsec < b.nsec:
		return -1
	case a.nsec > b.nsec:
		return 1
	}
	return 0
}

// instantOf reads an attribute as an instant (docs/reference/evaluation.md, Instants): a string is an
// RFC 3339 date-time or epoch milliseconds written as digits; a number is epoch milliseconds,
// its exact value truncated toward zero to whole nanoseconds. Anything else is no instant.
func instantOf(v any) (instant, bool) {
	switch x := v.(type) {
	case string:
		return parseInstant(x)
	case float64:
		return instantFromFloatMillis(x)
	case float32:
		return instantFromFloatMillis(float64(x))
	case json.Number:
		// A JSON number, read as encoding/json reads one into float64.
		f, ok := parseNumber(string(x))
		if !ok {
			return instant{}, false
		}
		return instantFromFloatMillis(f)
	case int:
		return instantFromMillis(int64(x))
	case int64:
		return instantFromMillis(x)
	case int32:
		return instantFromMillis(int64(x))
	case int16:
		return instantFromMillis(int64(x))
	case int8:
		return instantFromMillis(int64(x))
	case uint:
		return instantFromUnsignedMillis(uint64(x))
	case uint64:
		return instantFromUnsignedMillis(x)
	case uint32:
		return instantFromMillis(int64(x))
	case uint16:
		return instantFromMillis(int64(x))
	case uint8:
		return instantFromMillis(int64(x))
	}
	return instant{}, false
}

func instantFromUnsignedMillis(ms uint64) (instant, bool) {
	if ms > math.MaxInt64 {
		return instant{}, false
	}
	return instantFromMillis(int64(ms))
}

// instantFromMillis is the instant ms milliseconds after the epoch (before it when negative).
func instantFromMillis(ms int64) (instant, bool) {
	sec, rem := ms/1000, ms%1000
	if rem < 0 {
		sec--
		rem += 1000
	}
	t := instant{sec: sec, nsec: rem * 1e6}
	return t, t.valid()
}

// instantFromFloatMillis is the instant f milliseconds after the epoch, f's exact binary
// value truncated toward zero to whole nanoseconds. The fraction of a millisecond is
// multiplied by 10^6 in 128-bit integer arithmetic: a float64 product could round up across
// a whole nanosecond.
func instantFromFloatMillis(f float64) (instant, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e15 {
		// 10^15 ms is about year 33658: beyond every instant, and small enough that the
		// whole milliseconds below are exact in int64.
		return instant{}, false
	}
	neg := f < 0
	a := math.Abs(f)
	whole := math.Trunc(a)
	frac := a - whole // exact: both are float64 values with the same exponent range
	var nanos int64
	if frac > 0 {
		// frac = fr × 2^exp with fr in [0.5, 1), so frac = m / 2^(53−exp) for the 53-bit m.
		fr, exp := math.Frexp(frac)
		m := uint64(fr * (1 << 53))
		shift := uint(53 - exp) // ≥ 53, since frac < 1 means exp ≤ 0
		hi, lo := bits.Mul64(m, 1e6)
		// nanos = floor(m × 10^6 / 2^shift), below 10^6 because frac < 1.
		switch {
		case shift >= 128:
			nanos = 0
		case shift >= 64:
			nanos = int64(hi >> (shift - 64))
		default:
			nanos = int64(lo>>shift | hi<<(64-shift))
		}
	}
	ms := int64(whole)
	sec, rem := ms/1000, ms%1000
	nsec := rem*1e6 + nanos
	if neg {
		// Truncation toward zero mirrors: -(sec s + nsec ns).
		sec, nsec = -sec, -nsec
		if nsec < 0 {
			sec--
			nsec += 1e9
		}
	}
	t := instant{sec: sec, nsec: nsec}
	return t, t.valid()
}

// parseInstant reads an instant from text: an optional "-" and at least one digit are epoch
// milliseconds; anything else must be an RFC 3339 date-time in the restricted form of
// docs/reference/evaluation.md, Instants.
func parseInstant(s string) (instant, bool) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if isDigits(digits) {
		// Leading zeros are allowed; past 18 significant digits the value is out of range
		// anyway, and stopping there keeps int64 from overflowing.
		for len(digits) > 1 && digits[0] == '0' {
			digits = digits[1:]
		}
		if len(digits) > 18 {
			return instant{}, false
		}
		var ms int64
		for i := 0; i < len(digits); i++ {
			ms = ms*10 + int64(digits[i]-'0')
		}
		if s[0] == '-' {
			ms = -ms
		}
		return instantFromMillis(ms)
	}
	return parseRFC3339(s)
}

// parseRFC3339 reads YYYY-MM-DDTHH:MM:SS[.F](Z|±hh:mm) with an uppercase T and Z, hours 00–23,
// minutes and seconds 00–59 (no leap second), a fraction of 1 to 9 digits and offset hours
// 00–23, minutes 00–59. The instant, in UTC, must fall in the years 0000 to 9999.
func parseRFC3339(s string) (instant, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") {
		return instant{}, false
	}
	year, ok1 := fixedDigits(s[0:4])
	month, ok2 := fixedDigits(s[5:7])
	day, ok3 := fixedDigits(s[8:10])
	hour, ok4 := fixedDigits(s[11:13])
	minute, ok5 := fixedDigits(s[14:16])
	second, ok6 := fixedDigits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
		month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || second > 59 {
		return instant{}, false
	}
	rest := s[19:]
	var nsec int64
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
			n++
		}
		frac := rest[1:n]
		if len(frac) < 1 || len(frac) > 9 {
			return instant{}, false
		}
		for i := 0; i < 9; i++ {
			nsec *= 10
			if i < len(frac) {
				nsec += int64(frac[i] - '0')
			}
		}
		rest = rest[n:]
	}
	var offset int64
	switch {
	case rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := fixedDigits(rest[1:3])
		om, ok2 := fixedDigits(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return instant{}, false
		}
		offset = int64(oh*3600 + om*60)
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return instant{}, false
	}
	sec := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+second) - offset
	t := instant{sec: sec, nsec: nsec}
	return t, t.valid()
}

// fixedDigits reads a string of ASCII digits only.
func fixedDigits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// daysIn is the number of days of a month in the proleptic Gregorian calendar.
func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to the date (Howard Hinnant's
// days_from_civil, proleptic Gregorian), for years 0 and later.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
