package scim

import (
	"encoding/json"
	"strings"
)

// userSchema is the core User schema's URN; attribute paths may carry it as
// a prefix (RFC 7644, section 3.10).
const userSchema = "urn:ietf:params:scim:schemas:core:2.0:User"

// userState is a user as a request leaves it, before it is written. The
// name Switchyard keeps is one string; SCIM's displayName, name.formatted
// and name.givenName/familyName all feed it (see name).
type userState struct {
	userName   string
	current    string  // the stored name
	display    *string // displayName, when this request set it
	formatted  *string // name.formatted, when this request set it
	given      *string
	family     *string
	partsSet   bool // this request set givenName or familyName
	externalID *string
	active     bool
}

// name is the user's name after the request: the displayName it sent, else
// name.formatted, else the given and family names, else the stored name, else
// the userName.
func (u *userState) name() string {
	for _, s := range []*string{u.display, u.formatted} {
		if s != nil && strings.TrimSpace(*s) != "" {
			return strings.TrimSpace(*s)
		}
	}
	if u.partsSet {
		if n := strings.TrimSpace(deref(u.given) + " " + deref(u.family)); n != "" {
			return n
		}
	}
	if strings.TrimSpace(u.current) != "" {
		return u.current
	}
	return u.userName
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// set applies one attribute, by its path in any letter case, the way add
// and replace do; value nil (remove) clears it. Attributes Switchyard does
// not keep (emails, phone numbers, the enterprise extension and the rest of
// what providers send) are accepted and ignored, so that a provider's
// mapping never fails over them: userName is the e-mail address.
func (u *userState) set(path string, value any) error {
	p := strings.ToLower(path)
	p = strings.TrimPrefix(p, strings.ToLower(userSchema)+":")
	if strings.ContainsRune(p, '[') {
		if _, _, err := ParseValuePath(path); err != nil {
			return err
		}
		return nil // emails[type eq "work"].value and the like
	}
	switch p {
	case "username":
		s, err := stringValue(path, value)
		if err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			return errInvalidValue("userName is required")
		}
		u.userName = strings.TrimSpace(s)
	case "displayname":
		s, err := optString(path, value)
		if err != nil {
			return err
		}
		u.display = s
	case "name":
		if value == nil {
			u.formatted, u.given, u.family, u.partsSet = nil, nil, nil, true
			return nil
		}
		m, ok := value.(map[string]any)
		if !ok {
			return errInvalidValue("name must be an object")
		}
		for k, v := range m {
			if err := u.set("name."+k, v); err != nil {
				return err
			}
		}
	case "name.formatted":
		s, err := optString(path, value)
		if err != nil {
			return err
		}
		u.formatted = s
	case "name.givenname":
		s, err := optString(path, value)
		if err != nil {
			return err
		}
		u.given, u.partsSet = s, true
	case "name.familyname":
		s, err := optString(path, value)
		if err != nil {
			return err
		}
		u.family, u.partsSet = s, true
	case "externalid":
		s, err := optString(path, value)
		if err != nil {
			return err
		}
		u.externalID = s
	case "active":
		if value == nil {
			return errInvalidValue("active cannot be removed")
		}
		b, err := boolValue(path, value)
		if err != nil {
			return err
		}
		u.active = b
	}
	return nil
}

// setAll applies every member of a resource or of a PATCH value without a
// path.
func (u *userState) setAll(m map[string]any) error {
	for k, v := range m {
		if strings.HasPrefix(strings.ToLower(k), "urn:") && !strings.HasPrefix(strings.ToLower(k), strings.ToLower(userSchema)+":") {
			continue // an extension schema's object
		}
		if err := u.set(k, v); err != nil {
			return err
		}
	}
	return nil
}

func stringValue(path string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errInvalidValue("%s must be a string", path)
	}
	return s, nil
}

func optString(path string, v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	s, err := stringValue(path, v)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// boolValue reads a boolean, or the strings "True" and "False" in any case,
// as Microsoft Entra ID sends them.
func boolValue(path string, v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(b) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, errInvalidValue("%s must be a boolean", path)
}

// patchRequest is a PATCH body (RFC 7644, section 3.5.2).
type patchRequest struct {
	Operations []patchOp `json:"Operations"`
}

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// decodeValue decodes an operation's value; a missing one is nil.
func (op patchOp) decodeValue() (any, error) {
	if len(op.Value) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(op.Value, &v); err != nil {
		return nil, errInvalidSyntax("an operation's value is not JSON")
	}
	return v, nil
}

// applyUserPatch applies a PATCH's operations in order: add and replace with
// a path set that attribute, without one every member of the object value;
// remove clears the path. Operation names count in any case.
func applyUserPatch(u *userState, ops []patchOp) error {
	for _, op := range ops {
		v, err := op.decodeValue()
		if err != nil {
			return err
		}
		switch strings.ToLower(op.Op) {
		case "add", "replace":
			if op.Path == "" {
				m, ok := v.(map[string]any)
				if !ok {
					return errInvalidValue("an operation without a path needs an object value")
				}
				if err := u.setAll(m); err != nil {
					return err
				}
				continue
			}
			if err := u.set(op.Path, v); err != nil {
				return err
			}
		case "remove":
			if op.Path == "" {
				return &Error{Status: 400, SCIMType: scimNoTarget, Detail: "remove needs a path"}
			}
			if err := u.set(op.Path, nil); err != nil {
				return err
			}
		default:
			return errInvalidValue("unknown operation %q", op.Op)
		}
	}
	return nil
}
