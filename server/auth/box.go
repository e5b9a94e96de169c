package auth

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// ErrBadBox is returned for any value a Box did not seal under its key and
// purpose: forged, truncated, tampered with or sealed under another secret.
var ErrBadBox = errors.New("invalid sealed value")

// Box seals arbitrary bytes with AES-256-GCM under a key derived from
// SESSION_SECRET for one purpose. It is the Sealer's sibling for values other
// than session ids: secrets at rest (an identity provider's client secret) and
// short-lived browser state (a sign-in's PKCE verifier, state and nonce). A
// value sealed for one purpose does not open under another.
type Box struct {
	aead cipher.AEAD
}

// NewBox derives a key from secret and purpose with HKDF-SHA256.
func NewBox(secret, purpose string) (*Box, error) {
	aead, err := newAEAD(secret, "switchyard box v1: "+purpose)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal returns nonce || ciphertext of plain.
func (b *Box) Seal(plain []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return b.aead.Seal(nonce, nonce, plain, nil), nil
}

// Open returns the plaintext of a value Seal returned, or ErrBadBox.
func (b *Box) Open(sealed []byte) ([]byte, error) {
	if len(sealed) < b.aead.NonceSize()+b.aead.Overhead() {
		return nil, ErrBadBox
	}
	plain, err := b.aead.Open(nil, sealed[:b.aead.NonceSize()], sealed[b.aead.NonceSize():], nil)
	if err != nil {
		return nil, ErrBadBox
	}
	return plain, nil
}
