package auth_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/server/auth"
)

func TestNewCredential(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{auth.SDKKeyKind, auth.TokenKind} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			full, prefix, hash, err := auth.NewCredential(kind)
			if err != nil {
				t.Fatalf("NewCredential: %v", err)
			}
			if want := regexp.MustCompile("^" + kind + "[0-9a-f]{64}$"); !want.MatchString(full) {
				t.Errorf("full = %q, want %s followed by 64 lowercase hex digits", full, kind)
			}
			if len(prefix) != 12 || !strings.HasPrefix(full, prefix) {
				t.Errorf("prefix = %q, want the first 12 characters of %q", prefix, full)
			}
			if !bytes.Equal(hash, auth.HashCredential(full)) || len(hash) != 32 {
				t.Errorf("hash = %x, want HashCredential(full) (32 bytes)", hash)
			}
			again, _, _, err := auth.NewCredential(kind)
			if err != nil || again == full {
				t.Errorf("second NewCredential = %q, %v; want a different value", again, err)
			}
		})
	}
	t.Run("unknown kind", func(t *testing.T) {
		t.Parallel()
		if _, _, _, err := auth.NewCredential("sk_test_"); err == nil {
			t.Error("NewCredential(sk_test_) succeeded, want an error")
		}
	})
}

func TestHashCredential(t *testing.T) {
	t.Parallel()
	a, b := auth.HashCredential("pat_abc"), auth.HashCredential("pat_abd")
	if !bytes.Equal(a, auth.HashCredential("pat_abc")) {
		t.Error("HashCredential is not deterministic")
	}
	if bytes.Equal(a, b) {
		t.Error("HashCredential maps different credentials to one hash")
	}
}
