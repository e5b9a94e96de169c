package audit

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Actor kinds (docs/audit.md, Actors).
const (
	ActorUser      = "user"      // a session
	ActorToken     = "token"     // a personal access token: whose (id, email), which (label: its prefix)
	ActorSDKKey    = "sdk_key"   // label: the key's prefix
	ActorSCIM      = "scim"      // a SCIM token: id and label (its prefix)
	ActorSSO       = "sso"       // single sign-on's sign-in and provisioning: email from the provider
	ActorRelease   = "release"   // a guarded release's own writes: id is the release's
	ActorSchedule  = "schedule"  // a scheduled change applied: id is the change's, email its author's
	ActorSystem    = "system"    // first boot, retention: label says which
	ActorAnonymous = "anonymous" // a failed sign-in: email is the address tried
)

// Resource types, the first half of every action (docs/audit.md, Actions).
const (
	Workspace     = "workspace"
	Project       = "project"
	Environment   = "environment"
	SDKKey        = "sdk_key"
	Member        = "member"
	User          = "user"
	Token         = "token"
	SCIMToken     = "scim_token"
	SSO           = "sso"
	SCIM          = "scim"
	Flag          = "flag"
	Segment       = "segment"
	ChangeRequest = "change_request"
	Schedule      = "schedule"
	Webhook       = "webhook"
	Chat          = "chat"
	Release       = "release"
	Auth          = "auth"
)

// ResourceTypes lists every resource type, in the order the API documents them.
var ResourceTypes = []string{Workspace, Project, Environment, SDKKey, Member, User, Token, SCIMToken, SSO, SCIM, Flag, Segment, ChangeRequest, Schedule, Webhook, Chat, Release, Auth}

// Actor is who made a change.
type Actor struct {
	Kind  string  `json:"kind"`
	ID    *string `json:"id"`
	Email *string `json:"email"`
	Label *string `json:"label"`
}

// Resource is what a change was made to: its API id (a member's is the
// user's id; a flag's and a segment's is its key), key and name where it has
// them.
type Resource struct {
	Type string  `json:"type"`
	ID   string  `json:"id"`
	Key  *string `json:"key"`
	Name *string `json:"name"`
}

// Request is the HTTP request that made a change, when one did.
type Request struct {
	RequestID *string `json:"request_id"`
	IP        *string `json:"ip"`
	UserAgent *string `json:"user_agent"`
}

// Entry is one entry of the trail as the server encodes it: the JSON of
// an Entry is its canonical bytes, stored as they were written, hashed
// and MACed; the API's entry is this plus the hash.
type Entry struct {
	ID            int64           `json:"id"`
	At            time.Time       `json:"at"`
	Action        string          `json:"action"`
	Actor         Actor           `json:"actor"`
	Resource      Resource        `json:"resource"`
	ProjectID     *uuid.UUID      `json:"project_id"`
	EnvironmentID *uuid.UUID      `json:"environment_id"`
	Before        json.RawMessage `json:"before"`
	After         json.RawMessage `json:"after"`
	Request       Request         `json:"request"`
}

// Change is what a write path records. Before and After are the resource's
// API representation (encoded with encoding/json, or a json.RawMessage that
// encoding/json wrote; nil for none) and never hold a secret. A change that names its environment but not its project
// is recorded with the environment's project. Actor, when nil, is the one the context names (WithActor),
// else the request's principal, else the system.
type Change struct {
	Action        string // "<resource>.<verb>"
	Resource      Resource
	ProjectID     *uuid.UUID
	EnvironmentID *uuid.UUID
	Before, After any
	Actor         *Actor
}

// Str returns a pointer to s, or nil when s is empty: the optional fields
// of actors and resources.
func Str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ID returns a pointer to id, or nil for the zero UUID.
func ID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}
