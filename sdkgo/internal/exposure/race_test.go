//go:build race

package exposure

const raceEnabled = true
