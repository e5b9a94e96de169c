package app_test

import (
	"testing"
)

// Text PostgreSQL cannot store (NUL, invalid UTF-8) is the client's error,
// never a 500, wherever it appears.
func TestUnstorableTextIsRejected(t *testing.T) {
	t.Parallel()
	fe := newFlagEnv(t)
	env := "/api/environments/" + fe.envs["production"]
	cases := []struct {
		name, method, path string
		body               any
		want               int
	}{
		{"NUL in a path key", "GET", fe.flags("production") + "/a%00b", nil, 404},
		{"invalid UTF-8 in a path key", "GET", fe.flags("production") + "/a%FFb", nil, 404},
		{"NUL in a query", "GET", env + "/audit?flag_key=a%00b", nil, 422},
		{"invalid UTF-8 in a query", "GET", env + "/impressions?user_id=%FF", nil, 422},
		{"NUL escape in a body", "POST", fe.flags("production"), `{"key":"k","is_enabled":true,"description":"a\u0000b"}`, 422},
		{"NUL escape in a value", "POST", fe.flags("production"), `{"key":"k","is_enabled":true,"flag_type":"json","default_value":{"a":"\u0000"}}`, 422},
		{"NUL in a login", "POST", "/api/auth/login", `{"email":"a\u0000@x","password":"x"}`, 422},
		{"NUL in an impression", "POST", env + "/impressions", `[{"flag_key":"a","value":"x\u0000"}]`, 422},
		{"invalid UTF-8 body", "POST", "/api/projects", "{\"name\":\"a\xffb\"}", 400},
		{"an escaped backslash before u0000 is plain text", "POST", fe.flags("production"), `{"key":"k2","is_enabled":true,"description":"C:\\u0000"}`, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if status, body := fe.call(t, c.method, c.path, c.body); status != c.want {
				t.Errorf("= %d %v, want %d", status, body, c.want)
			}
		})
	}
}
