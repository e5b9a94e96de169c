package sdkgo_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyBoundary enforces docs/reference/code-style.md, §2 Layout and dependencies
// and §15 Don'ts: the SDK and its evaluator depend on the standard library and murmur3 only,
// never on server code, generated code, the database or the HTTP stack, so that importing the
// SDK pulls nothing heavy into a user's program.
//
// The OpenFeature adapter (sdkgo/openfeature) exists to import OpenFeature's
// SDK, so it is held only to the forbidden list.
func TestDependencyBoundary(t *testing.T) {
	deps := goListDeps(t, "./sdkgo/...")
	core := goListDeps(t, "./sdkgo", "./sdkgo/eval", "./sdkgo/internal/...")

	forbidden := []struct {
		name   string
		prefix string
	}{
		{"pgx", "github.com/jackc/"},
		{"rueidis", "github.com/redis/rueidis"},
		{"gorilla", "github.com/gorilla/"},
		{"kin-openapi", "github.com/getkin/kin-openapi"},
		{"server code", "github.com/switchyard/switchyard/server"},
		{"sqlc output", "github.com/switchyard/switchyard/db"},
		{"generated API code", "github.com/switchyard/switchyard/gen"},
	}
	for _, f := range forbidden {
		t.Run(f.name, func(t *testing.T) {
			for _, d := range deps {
				base := strings.TrimSuffix(f.prefix, "/")
				if d == base || strings.HasPrefix(d, base+"/") {
					t.Errorf("sdkgo depends on %s (%s)", d, f.name)
				}
			}
		})
	}

	// Beyond the standard library only murmur3 and the SDK's own packages are allowed.
	t.Run("only stdlib and murmur3", func(t *testing.T) {
		for _, d := range core {
			first := strings.SplitN(d, "/", 2)[0]
			isStd := !strings.Contains(first, ".")
			switch {
			case isStd:
			case d == "github.com/spaolacci/murmur3":
			case strings.HasPrefix(d, "github.com/switchyard/switchyard/sdkgo"):
			default:
				t.Errorf("sdkgo depends on %s, outside the standard library and murmur3", d)
			}
		}
	})
}

// goListDeps lists the packages the patterns depend on, resolved from the
// module root (the test runs in sdkgo/).
func goListDeps(t *testing.T, patterns ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps"}, patterns...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %v: %v\n%s", patterns, err, stderr)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no packages")
	}
	return deps
}
