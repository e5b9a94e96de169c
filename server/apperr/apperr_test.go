package apperr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/switchyard/switchyard/server/apperr"
)

func TestKindOf(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want apperr.Kind
	}{
		{"plain error is internal", errors.New("boom"), apperr.Internal},
		{"direct", apperr.E(apperr.NotFound, "no flag"), apperr.NotFound},
		{"wrapped by fmt", fmt.Errorf("get flag: %w", apperr.E(apperr.Conflict, "dup")), apperr.Conflict},
		{"field", apperr.Field("key", "too long"), apperr.Invalid},
		{"database unavailable, wrapped", fmt.Errorf("look up token: %w", apperr.DatabaseUnavailable(errors.New("refused"))), apperr.Unavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := apperr.KindOf(c.err); got != c.want {
				t.Errorf("KindOf = %v, want %v", got, c.want)
			}
		})
	}
}

func TestWithCopies(t *testing.T) {
	base := apperr.E(apperr.Unauthenticated, "invalid credentials")
	a := base.With("attempts_remaining", 3)
	if base.Extra != nil {
		t.Fatalf("With mutated the receiver: %v", base.Extra)
	}
	if a.Extra["attempts_remaining"] != 3 {
		t.Fatalf("Extra = %v", a.Extra)
	}
}

func TestUnwrapKeepsCause(t *testing.T) {
	cause := errors.New("connection refused")
	err := apperr.Wrap(apperr.Unavailable, "database unavailable", cause)
	if !errors.Is(err, cause) {
		t.Fatal("errors.Is lost the cause")
	}
	if err.Error() != "database unavailable: connection refused" {
		t.Fatalf("Error() = %q", err.Error())
	}
}
