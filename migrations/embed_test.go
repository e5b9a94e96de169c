package migrations_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/migrations"
)

// TestFilesAreWellFormed checks what goose would only find at startup: every
// embedded file is numbered, the numbers rise from 00001 without repeats,
// and it has both sections. Goose orders migrations by number and needs no
// contiguous numbers, so work written in parallel can reserve its number.
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
			switch {
			case i == 0 && m[1] != "00001":
				t.Errorf("number %s, want 00001 for the first migration", m[1])
			case i > 0 && m[1] <= names[i-1][:5]:
				t.Errorf("number %s does not follow %s", m[1], names[i-1][:5])
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
