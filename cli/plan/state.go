package plan

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/sdkgo/eval"
)

// State is what the server holds of the projects a file names, by slug.
type State struct {
	Projects map[string]*Project
}

// Project is a project on the server.
type Project struct {
	ID           uuid.UUID
	Slug, Name   string
	Environments map[string]*Environment
}

// Environment is an environment on the server. Its flags, segments and
// pending change requests are read only for the environments a file names.
type Environment struct {
	ID              uuid.UUID
	Slug, Name      string
	Color           string
	RequireApproval bool
	Flags           map[string]eval.Flag
	Segments        map[string]Segment
	Pending         []ChangeRequest
}

// Segment is a segment on the server.
type Segment struct {
	Key, Name   string
	Description *string
	Rules       []eval.Rule
}

// ChangeRequest is a pending change request: the merge patch it would
// apply to a flag.
type ChangeRequest struct {
	ID      int64
	FlagKey string
	Patch   json.RawMessage
}

// seeded are the environments every new project starts with
// (docs/reference/identity.md, Projects and environments), so that a plan
// for a project that does not exist yet knows what its creation brings.
func seeded() map[string]*Environment {
	envs := map[string]*Environment{}
	for _, e := range []Environment{
		{Slug: "production", Name: "Production", Color: "#ef4444"},
		{Slug: "staging", Name: "Staging", Color: "#f59e0b"},
		{Slug: "development", Name: "Development", Color: "#22c55e"},
	} {
		e.Flags, e.Segments = map[string]eval.Flag{}, map[string]Segment{}
		envs[e.Slug] = &e
	}
	return envs
}
