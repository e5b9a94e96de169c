package sso_test

import (
	"testing"

	"github.com/switchyard/switchyard/server/sso"
)

func TestSafeRedirect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/flags?env=prod#top", "/flags?env=prod#top"},
		{"/", "/"},
		{"", "/"},
		{"//evil.example", "/"},
		{"//evil.example/path", "/"},
		{"/\\evil.example", "/"},
		{"https://evil.example", "/"},
		{"http:/evil.example", "/"},
		{"javascript:alert(1)", "/"},
		{"evil.example", "/"},
		{"/ok\r\nSet-Cookie: x=1", "/"},
		{"/\tevil", "/"},
	} {
		if got := sso.SafeRedirect(tc.in); got != tc.want {
			t.Errorf("SafeRedirect(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
