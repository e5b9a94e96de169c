package app_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/switchyard/switchyard/server/internal/apptest"
)

// trailEntry is an entry of GET /api/audit as a test reads it.
type trailEntry struct {
	ID     int64     `json:"id"`
	At     time.Time `json:"at"`
	Action string    `json:"action"`
	Actor  struct {
		Kind  string  `json:"kind"`
		ID    *string `json:"id"`
		Email *string `json:"email"`
		Label *string `json:"label"`
	} `json:"actor"`
	Resource struct {
		Type string  `json:"type"`
		ID   string  `json:"id"`
		Key  *string `json:"key"`
		Name *string `json:"name"`
	} `json:"resource"`
	ProjectID     *uuid.UUID      `json:"project_id"`
	EnvironmentID *uuid.UUID      `json:"environment_id"`
	Before        json.RawMessage `json:"before"`
	After         json.RawMessage `json:"after"`
	Request       struct {
		RequestID *string `json:"request_id"`
		IP        *string `json:"ip"`
		UserAgent *string `json:"user_agent"`
	} `json:"request"`
	Hash *string `json:"hash"`
}

// trail returns every entry GET /api/audit?query answers to bearer (a
// workspace admin's token, say), newest first, following next_cursor.
func trail(t *testing.T, s *apptest.Server, bearer, query string) []trailEntry {
	t.Helper()
	var all []trailEntry
	cursor := ""
	for {
		path := "/api/audit?limit=500"
		if query != "" {
			path += "&" + query
		}
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		var page struct {
			Items      []trailEntry `json:"items"`
			NextCursor *string      `json:"next_cursor"`
		}
		must(t, s, bearer, http.MethodGet, path, nil, http.StatusOK, &page)
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all
		}
		cursor = *page.NextCursor
	}
}

// trailFind returns the newest entry of entries with action whose resource
// id is resourceID (any resource when empty), failing the test when none is.
func trailFind(t *testing.T, entries []trailEntry, action, resourceID string) trailEntry {
	t.Helper()
	for _, e := range entries {
		if e.Action == action && (resourceID == "" || e.Resource.ID == resourceID) {
			return e
		}
	}
	t.Fatalf("no %s entry for resource %q among %d entries", action, resourceID, len(entries))
	return trailEntry{}
}

// trailState decodes an entry's before or after state.
func trailState(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode state %s: %v", raw, err)
	}
	return m
}
