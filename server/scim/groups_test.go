package scim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A change of a group alters the groups of those who join or leave it, and,
// when it is renamed, of every member before and after (mappings match
// names).
func TestAffectedMembers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		renamed       bool
		before, after []int64
		want          []int64
	}{
		{"nothing changes", false, []int64{1, 2}, []int64{2, 1}, nil},
		{"joins", false, []int64{1}, []int64{1, 3, 2}, []int64{2, 3}},
		{"leaves", false, []int64{3, 1, 2}, []int64{2}, []int64{1, 3}},
		{"joins and leaves", false, []int64{1, 2}, []int64{2, 3}, []int64{1, 3}},
		{"renamed", true, []int64{2, 1}, []int64{2, 3}, []int64{1, 2, 3}},
		{"renamed, no members", true, nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, affectedMembers(tc.renamed, tc.before, tc.after)); diff != "" {
				t.Errorf("affectedMembers (-want +got):\n%s", diff)
			}
		})
	}
}
