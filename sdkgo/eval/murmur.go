//go:build !race

package eval

import "github.com/spaolacci/murmur3"

// raceEnabled reports whether this is a -race build; see murmur_race.go.
const raceEnabled = false

// sum32 is MurmurHash3 x86 32-bit with seed 0. murmur3.Sum32 hashes a byte slice in place,
// so a caller's stack buffer stays on the stack and hashing does not allocate.
func sum32(b []byte) uint32 {
	return murmur3.Sum32(b)
}
