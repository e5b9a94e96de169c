package scim

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Prefix is where the SCIM service is served: the base URL an identity
// provider is given is the server's address followed by it.
const Prefix = "/scim/v2"

// maxBody bounds a request body; SCIM resources are small.
const maxBody = 1 << 20

// Paging limits of list responses (RFC 7644, section 3.4.2.4).
const (
	defaultCount = 100
	maxCount     = 200
)

const listSchema = "urn:ietf:params:scim:api:messages:2.0:ListResponse"

// HandlerConfig is what the /scim/v2/ handler needs.
type HandlerConfig struct {
	Service *Service
	Logger  *slog.Logger // discarded when nil
	// Unreachable reports whether an error means the database could not be
	// reached; such errors answer 503. Nil: none do.
	Unreachable func(error) bool
}

// NewHandler returns the hand-written handler of everything under /scim/v2/.
// Its bodies are application/scim+json and its errors have SCIM's own shape,
// so it stays outside the API's validator; every request needs a SCIM token.
func NewHandler(cfg HandlerConfig) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &handler{cfg: cfg}
}

type handler struct {
	cfg HandlerConfig
}

// request is one SCIM request after authentication.
type request struct {
	w     http.ResponseWriter
	r     *http.Request
	actor Actor
	base  string // the absolute URL of /scim/v2, for meta.location
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		h.fail(w, r, errNotFound("resource"))
		return
	}
	actor, err := h.cfg.Service.Authenticate(r.Context(), bearerOf(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	req := &request{w: w, r: r, actor: actor, base: baseURL(r)}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	id := ""
	if len(parts) > 1 {
		id = parts[1]
	}
	if len(parts) > 2 || parts[0] == "" {
		h.fail(w, r, errNotFound("resource"))
		return
	}
	switch parts[0] {
	case "ServiceProviderConfig":
		if id != "" {
			err = errNotFound("resource")
		} else {
			err = h.get(req, func() (any, error) { return serviceProviderConfig(req.base), nil })
		}
	case "ResourceTypes":
		err = h.get(req, func() (any, error) { return resourceTypes(req.base, id) })
	case "Schemas":
		err = h.get(req, func() (any, error) { return schemas(req.base, id) })
	case "Users":
		err = h.users(req, id)
	case "Groups":
		err = h.groups(req, id)
	default:
		err = errNotFound("resource")
	}
	if err != nil {
		h.fail(w, r, err)
	}
}

// get answers a read-only resource.
func (h *handler) get(req *request, read func() (any, error)) error {
	if req.r.Method != http.MethodGet {
		return errMethod()
	}
	v, err := read()
	if err != nil {
		return err
	}
	return h.write(req.w, http.StatusOK, v)
}

func (h *handler) users(req *request, id string) error {
	s, ctx := h.cfg.Service, req.r.Context()
	switch {
	case id == "" && req.r.Method == http.MethodGet:
		f, offset, limit, start, err := listParams(req.r)
		if err != nil {
			return err
		}
		users, total, err := s.ListUsers(ctx, f, offset, limit)
		if err != nil {
			return err
		}
		out := make([]any, len(users))
		for i, u := range users {
			out[i] = userResource(u, req.base)
		}
		return h.write(req.w, http.StatusOK, listResponse(out, total, start))
	case id == "" && req.r.Method == http.MethodPost:
		m, err := decodeObject(req.r)
		if err != nil {
			return err
		}
		u, err := s.CreateUser(ctx, req.actor, m)
		if err != nil {
			return err
		}
		req.w.Header().Set("Location", req.base+"/Users/"+strconv.FormatInt(u.ID, 10))
		return h.write(req.w, http.StatusCreated, userResource(u, req.base))
	case id == "":
		return errMethod()
	}
	var u User
	var err error
	switch req.r.Method {
	case http.MethodGet:
		u, err = s.GetUser(ctx, id)
	case http.MethodPut:
		var m map[string]any
		if m, err = decodeObject(req.r); err == nil {
			u, err = s.ReplaceUser(ctx, req.actor, id, m)
		}
	case http.MethodPatch:
		var ops []patchOp
		if ops, err = decodePatch(req.r); err == nil {
			u, err = s.PatchUser(ctx, req.actor, id, ops)
		}
	case http.MethodDelete:
		if err := s.DeleteUser(ctx, req.actor, id); err != nil {
			return err
		}
		req.w.WriteHeader(http.StatusNoContent)
		return nil
	default:
		return errMethod()
	}
	if err != nil {
		return err
	}
	return h.write(req.w, http.StatusOK, userResource(u, req.base))
}

// listParams reads filter, startIndex and count (RFC 7644, section 3.4.2):
// startIndex below 1 counts as 1, count defaults to 100 and is capped at 200.
func listParams(r *http.Request) (f Filter, offset, limit, start int, err error) {
	q := r.URL.Query()
	if f, err = ParseFilter(q.Get("filter")); err != nil {
		return Filter{}, 0, 0, 0, err
	}
	start, limit = 1, defaultCount
	if v := q.Get("startIndex"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return Filter{}, 0, 0, 0, errInvalidValue("startIndex must be an integer")
		}
		start = max(n, 1)
	}
	if v := q.Get("count"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return Filter{}, 0, 0, 0, errInvalidValue("count must be an integer")
		}
		limit = min(max(n, 0), maxCount)
	}
	return f, start - 1, limit, start, nil
}

func listResponse(resources []any, total int64, start int) map[string]any {
	return map[string]any{
		"schemas":      []string{listSchema},
		"totalResults": total,
		"startIndex":   start,
		"itemsPerPage": len(resources),
		"Resources":    resources,
	}
}

// decodeObject reads a body that must be one JSON object.
func decodeObject(r *http.Request) (map[string]any, error) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, errInvalidSyntax("the body could not be read")
	}
	if len(raw) > maxBody {
		return nil, &Error{Status: http.StatusRequestEntityTooLarge, Detail: "the body is over 1 MiB"}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errInvalidSyntax("the body must be a JSON object")
	}
	return m, nil
}

// decodePatch reads a PATCH body: an object with an Operations array.
func decodePatch(r *http.Request) ([]patchOp, error) {
	m, err := decodeObject(r)
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(m)
	var p patchRequest
	if err := json.Unmarshal(raw, &p); err != nil || p.Operations == nil {
		return nil, errInvalidSyntax("a PATCH body needs an Operations array")
	}
	return p.Operations, nil
}

func errMethod() error {
	return &Error{Status: http.StatusMethodNotAllowed, Detail: "method not allowed on this resource"}
}

// bearerOf reads the Authorization bearer value; a session cookie is not
// read at all, so it never authenticates here.
func bearerOf(r *http.Request) string {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// baseURL is the absolute URL of /scim/v2 as the client reached it.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + Prefix
}

func (h *handler) write(w http.ResponseWriter, status int, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/scim+json")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
	return nil
}

// fail writes err as a SCIM error; internal errors are logged once, here.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := toError(err)
	if h.cfg.Unreachable != nil && h.cfg.Unreachable(err) {
		e = &Error{Status: http.StatusServiceUnavailable, Detail: "the database is unavailable; try again shortly"}
		w.Header().Set("Retry-After", "5")
	}
	if e.Status == http.StatusInternalServerError && !errors.Is(err, r.Context().Err()) {
		h.cfg.Logger.ErrorContext(r.Context(), "scim request failed", "err", err.Error(), "method", r.Method, "path", r.URL.Path)
	}
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="scim"`)
	}
	_ = h.write(w, e.Status, e.body())
}

// userResource renders a user (RFC 7643, section 4.1).
func userResource(u User, base string) map[string]any {
	id := strconv.FormatInt(u.ID, 10)
	name := map[string]any{"formatted": u.Name}
	if u.GivenName != nil {
		name["givenName"] = *u.GivenName
	}
	if u.FamilyName != nil {
		name["familyName"] = *u.FamilyName
	}
	out := map[string]any{
		"schemas":     []string{userSchema},
		"id":          id,
		"userName":    u.Email,
		"displayName": u.Name,
		"name":        name,
		"emails":      []map[string]any{{"value": u.Email, "type": "work", "primary": true}},
		"active":      u.Active,
		"meta": map[string]any{
			"resourceType": "User",
			"created":      u.CreatedAt.UTC().Format(time.RFC3339),
			"lastModified": u.UpdatedAt.UTC().Format(time.RFC3339),
			"location":     base + "/Users/" + id,
		},
	}
	if u.ExternalID != nil {
		out["externalId"] = *u.ExternalID
	}
	return out
}
