package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters for new hashes: OWASP's Password Storage Cheat Sheet
// minimum (m=19 MiB, t=2, p=1). CheckPassword reads the parameters from each
// stored hash, so raising them later keeps old hashes valid.
const (
	argonMemory  = 19456 // KiB
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// Upper bounds on the parameters CheckPassword accepts from a stored hash, so
// a corrupt row cannot make one login allocate gigabytes.
const (
	maxArgonMemory  = 1 << 20 // KiB, 1 GiB
	maxArgonTime    = 16
	maxArgonThreads = 16
)

// HashPassword returns the argon2id hash of pw with a random salt in the PHC
// string format: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>, both parts in
// unpadded standard base64.
func HashPassword(pw string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version,
		argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// CheckPassword reports whether pw matches encoded, a hash from HashPassword.
// A malformed hash matches nothing. The final comparison is constant-time.
func CheckPassword(encoded, pw string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	var memory, time uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &time, &threads); err != nil ||
		memory < 1 || memory > maxArgonMemory || time < 1 || time > maxArgonTime ||
		threads < 1 || threads > maxArgonThreads {
		return false
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil || len(salt) == 0 {
		return false
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, time, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// DummyCheck spends the time of a CheckPassword against a current-parameter
// hash and discards the result. Login calls it when no account has the
// e-mail, so response times do not reveal which addresses exist.
func DummyCheck(pw string) {
	var salt [argonSaltLen]byte // any salt will do: the result is thrown away
	_ = argon2.IDKey([]byte(pw), salt[:], argonTime, argonMemory, argonThreads, argonKeyLen)
}
