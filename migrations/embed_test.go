package migrations_test

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/migrations"
)

// TestFilesAreWellFormed checks what goose would only find at startup: every
// embedded file is numbered in sequence from 00001 and has both sections.
func TestFilesAreWellFormed(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatalf("list migrations: %v", err)
	}
	if len(names) == 0 {
		t.Fatal("no migrations embedded")
	}
	valid := regexp.MustCompile(`^(\d{5})_[a-z0-9_]+\.sql$`)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := valid.FindStringSubmatch(name)
			if m == nil {
				t.Fatalf("name %q does not match 00001_snake_case.sql", name)
			}
			if want := fmt.Sprintf("%05d", i+1); m[1] != want {
				t.Errorf("number %s, want %s (numbers run 00001, 00002, ... without gaps)", m[1], want)
			}
			b, err := fs.ReadFile(migrations.FS, name)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			text := string(b)
			up, down := strings.Index(text, "-- +goose Up"), strings.Index(text, "-- +goose Down")
			if up < 0 || down < up {
				t.Errorf("want a '-- +goose Up' section followed by a '-- +goose Down' section")
			}
			if begins, ends := strings.Count(text, "-- +goose StatementBegin"), strings.Count(text, "-- +goose StatementEnd"); begins != ends {
				t.Errorf("%d StatementBegin but %d StatementEnd", begins, ends)
			}
		})
	}
}
