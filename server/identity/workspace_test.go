package identity_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard/switchyard/server/apperr"
	"github.com/switchyard/switchyard/server/identity"
)

func TestWorkspaceInfo(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	ctx := t.Context()

	if _, err := svc.WorkspaceInfo(ctx); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("WorkspaceInfo before Seed: error %v, want NotFound", err)
	}

	if err := svc.Seed(ctx, identity.SeedConfig{}); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	got, err := svc.WorkspaceInfo(ctx)
	if err != nil {
		t.Fatalf("WorkspaceInfo: %v", err)
	}
	if diff := cmp.Diff(identity.WorkspaceInfo{Name: "Switchyard", SetupComplete: false}, got); diff != "" {
		t.Errorf("WorkspaceInfo without users (-want +got):\n%s", diff)
	}

	if err := svc.Seed(ctx, identity.SeedConfig{AdminEmail: "a@example.com", AdminPassword: "password1"}); err != nil {
		t.Fatalf("Seed with admin: %v", err)
	}
	got, err = svc.WorkspaceInfo(ctx)
	if err != nil {
		t.Fatalf("WorkspaceInfo: %v", err)
	}
	if diff := cmp.Diff(identity.WorkspaceInfo{Name: "Switchyard", SetupComplete: true}, got); diff != "" {
		t.Errorf("WorkspaceInfo with a user (-want +got):\n%s", diff)
	}
}
