package scim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (h *handler) groups(req *request, id string) error {
	s, ctx := h.cfg.Service, req.r.Context()
	// Microsoft Entra ID asks for groups without their members.
	withMembers := true
	for _, a := range strings.Split(req.r.URL.Query().Get("excludedAttributes"), ",") {
		if strings.EqualFold(strings.TrimSpace(a), "members") {
			withMembers = false
		}
	}
	switch {
	case id == "" && req.r.Method == http.MethodGet:
		f, offset, limit, start, err := listParams(req.r)
		if err != nil {
			return err
		}
		groups, total, err := s.ListGroups(ctx, f, offset, limit)
		if err != nil {
			return err
		}
		out := make([]any, len(groups))
		for i, g := range groups {
			out[i] = groupResource(g, req.base, withMembers)
		}
		return h.write(req.w, http.StatusOK, listResponse(out, total, start))
	case id == "" && req.r.Method == http.MethodPost:
		m, err := decodeObject(req.r)
		if err != nil {
			return err
		}
		g, err := s.CreateGroup(ctx, req.actor, m)
		if err != nil {
			return err
		}
		req.w.Header().Set("Location", req.base+"/Groups/"+g.ID.String())
		return h.write(req.w, http.StatusCreated, groupResource(g, req.base, true))
	case id == "":
		return errMethod()
	}
	var g Group
	var err error
	switch req.r.Method {
	case http.MethodGet:
		g, err = s.GetGroup(ctx, id)
	case http.MethodPut:
		var m map[string]any
		if m, err = decodeObject(req.r); err == nil {
			g, err = s.ReplaceGroup(ctx, req.actor, id, m)
		}
	case http.MethodPatch:
		var ops []patchOp
		if ops, err = decodePatch(req.r); err == nil {
			g, err = s.PatchGroup(ctx, req.actor, id, ops)
		}
	case http.MethodDelete:
		if err := s.DeleteGroup(ctx, req.actor, id); err != nil {
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
	return h.write(req.w, http.StatusOK, groupResource(g, req.base, withMembers))
}

// groupResource renders a group (RFC 7643, section 4.2).
func groupResource(g Group, base string, withMembers bool) map[string]any {
	id := g.ID.String()
	out := map[string]any{
		"schemas":     []string{groupSchema},
		"id":          id,
		"displayName": g.DisplayName,
		"meta": map[string]any{
			"resourceType": "Group",
			"created":      g.CreatedAt.UTC().Format(time.RFC3339),
			"lastModified": g.UpdatedAt.UTC().Format(time.RFC3339),
			"location":     base + "/Groups/" + id,
		},
	}
	if g.ExternalID != nil {
		out["externalId"] = *g.ExternalID
	}
	if withMembers {
		members := make([]map[string]any, len(g.Members))
		for i, m := range g.Members {
			uid := strconv.FormatInt(m.UserID, 10)
			members[i] = map[string]any{"value": uid, "display": m.Name, "$ref": base + "/Users/" + uid}
		}
		out["members"] = members
	}
	return out
}
