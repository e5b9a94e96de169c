//go:build race

package eval

import "github.com/spaolacci/murmur3"

// raceEnabled reports whether this is a -race build.
const raceEnabled = true

// sum32 is MurmurHash3 x86 32-bit with seed 0, computed by the same murmur3 module through
// its streaming hasher. murmur3 v1.1.0's Sum32 walks its input with uintptr arithmetic,
// which the pointer checks that -race enables (-d=checkptr) reject as a fatal error; the
// streaming hasher reads through ordinary slice indexing and passes them. It allocates,
// which only race builds pay. The vectors run in both builds and pin the same buckets.
func sum32(b []byte) uint32 {
	h := murmur3.New32()
	_, _ = h.Write(b) // hash.Hash.Write never returns an error
	return h.Sum32()
}
