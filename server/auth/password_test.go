package auth_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"

	"github.com/switchyard/switchyard/server/auth"
)

func TestHashPasswordFormat(t *testing.T) {
	t.Parallel()
	a, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatalf("HashPassword: %v", err)
	}
	if !strings.HasPrefix(a, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q does not carry the argon2id PHC header with OWASP parameters", a)
	}
	b, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatalf("HashPassword: %v", err)
	}
	if a == b {
		t.Error("two hashes of one password are equal; the salt is not random")
	}
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	encoded, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatalf("HashPassword: %v", err)
	}
	// A hash made with other parameters (and key length) than ours: stored
	// hashes keep working when the parameters change.
	cheap := "$argon2id$v=19$m=64,t=1,p=2$c29tZXNhbHQ$" + base64.RawStdEncoding.EncodeToString(
		argon2.IDKey([]byte("password"), []byte("somesalt"), 1, 64, 2, 24))
	tests := []struct {
		name    string
		encoded string
		pw      string
		want    bool
	}{
		{"right password", encoded, "correct horse", true},
		{"wrong password", encoded, "correct horsf", false},
		{"empty password", encoded, "", false},
		{"other parameters, right password", cheap, "password", true},
		{"other parameters, wrong password", cheap, "passw0rd", false},
		{"empty hash", "", "correct horse", false},
		{"argon2i", strings.Replace(encoded, "argon2id", "argon2i", 1), "correct horse", false},
		{"wrong version", strings.Replace(encoded, "v=19", "v=16", 1), "correct horse", false},
		{"huge memory", strings.Replace(encoded, "m=19456", "m=99999999", 1), "correct horse", false},
		{"bad base64", encoded + "!", "correct horse", false},
		{"missing part", encoded[:strings.LastIndex(encoded, "$")], "correct horse", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := auth.CheckPassword(tt.encoded, tt.pw); got != tt.want {
				t.Errorf("CheckPassword(%q, %q) = %v, want %v", tt.encoded, tt.pw, got, tt.want)
			}
		})
	}
}

func TestDummyCheck(t *testing.T) {
	t.Parallel()
	auth.DummyCheck("anything") // must not panic; its cost is that of a real check
}
