// Package auth holds Switchyard's credentials and authentication rules: SDK
// keys and personal access tokens, password hashing, sessions, roles, login
// lockout and the CSRF header rule.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// The kinds of generated credential. Credentials are told apart by prefix:
// sk_live_ is a server SDK key, pk_live_ a client ("publishable") key and
// pat_ a personal access token (docs/reference/identity.md, Credentials);
// scim_ is a SCIM provisioning token, accepted only under /scim/v2/
// (docs/scim.md).
const (
	SDKKeyKind    = "sk_live_"
	ClientKeyKind = "pk_live_"
	TokenKind     = "pat_"
	SCIMTokenKind = "scim_"
)

// credentialPrefixLen is the length of the display prefix: the first 12
// characters of the full value (docs/reference/identity.md, Credentials).
const credentialPrefixLen = 12

// NewCredential returns a new random credential of kind (SDKKeyKind,
// ClientKeyKind, TokenKind or SCIMTokenKind): the full value, shown once to its creator; its
// display prefix; and the hash to store. The random part is 32 bytes from
// crypto/rand (256 bits, above the 128 that docs/reference/identity.md,
// Credentials, asks for) in lowercase hex, so the value is URL-safe and needs
// no padding.
func NewCredential(kind string) (full, prefix string, hash []byte, err error) {
	if kind != SDKKeyKind && kind != ClientKeyKind && kind != TokenKind && kind != SCIMTokenKind {
		return "", "", nil, fmt.Errorf("new credential: unknown kind %q", kind)
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return "", "", nil, fmt.Errorf("new credential: %w", err)
	}
	full = kind + hex.EncodeToString(secret[:])
	return full, full[:credentialPrefixLen], HashCredential(full), nil
}

// HashCredential returns the SHA-256 of a full credential, the value stored
// and looked up. A fast unsalted hash is enough here, unlike for passwords:
// the credential carries 256 random bits, so nothing can be guessed or
// precomputed, and a fast hash keeps the lookup on every API request cheap.
func HashCredential(full string) []byte {
	sum := sha256.Sum256([]byte(full))
	return sum[:]
}
