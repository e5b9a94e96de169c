package scim

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFilter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want Filter
		bad  bool
	}{
		{"empty", "", Filter{}, false},
		{"userName", `userName eq "ann@example.com"`, Filter{"userName", "ann@example.com"}, false},
		{"operator in capitals", `userName EQ "a"`, Filter{"userName", "a"}, false},
		{"extra spaces", `  displayName   eq   "Sales Team" `, Filter{"displayName", "Sales Team"}, false},
		{"escaped quote", `displayName eq "a \"b\" c"`, Filter{"displayName", `a "b" c`}, false},
		{"schema URN path", `urn:ietf:params:scim:schemas:core:2.0:User:userName eq "a"`, Filter{"urn:ietf:params:scim:schemas:core:2.0:User:userName", "a"}, false},
		{"empty value", `externalId eq ""`, Filter{"externalId", ""}, false},
		{"another operator", `userName co "a"`, Filter{}, true},
		{"unquoted value", `userName eq a`, Filter{}, true},
		{"and", `userName eq "a" and active eq true`, Filter{}, true},
		{"or", `userName eq "a" or userName eq "b"`, Filter{}, true},
		{"present", `userName pr`, Filter{}, true},
		{"parentheses", `(userName eq "a")`, Filter{}, true},
		{"bad escape", `userName eq "a\q"`, Filter{}, true},
		{"open quote", `userName eq "a`, Filter{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFilter(c.in)
			if c.bad {
				var se *Error
				if !errors.As(err, &se) || se.SCIMType != scimInvalidFilter || se.Status != 400 {
					t.Fatalf("ParseFilter(%q) = %v, %v; want an invalidFilter error", c.in, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFilter(%q): %v", c.in, err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("ParseFilter(%q) (-want +got):\n%s", c.in, diff)
			}
		})
	}
}

func TestParseValuePath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		in      string
		want    ValuePath
		bracket bool
		bad     bool
	}{
		{"plain path", "active", ValuePath{}, false, false},
		{"member", `members[value eq "12"]`, ValuePath{Attr: "members", Filter: Filter{"value", "12"}}, true, false},
		{"sub-attribute", `emails[type eq "work"].value`, ValuePath{Attr: "emails", Filter: Filter{"type", "work"}, Sub: "value"}, true, false},
		{"no attribute", `[value eq "1"]`, ValuePath{}, true, true},
		{"unclosed", `members[value eq "1"`, ValuePath{}, true, true},
		{"bad filter", `members[value co "1"]`, ValuePath{}, true, true},
		{"junk after", `members[value eq "1"]x`, ValuePath{}, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, bracket, err := ParseValuePath(c.in)
			if bracket != c.bracket || (err != nil) != c.bad {
				t.Fatalf("ParseValuePath(%q) = %v, %v, %v", c.in, got, bracket, err)
			}
			if diff := cmp.Diff(c.want, got); !c.bad && diff != "" {
				t.Errorf("ParseValuePath(%q) (-want +got):\n%s", c.in, diff)
			}
		})
	}
}

// applyUserPatch takes the operations Okta and Microsoft Entra ID send.
func TestApplyUserPatch(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	base := func() userState {
		return userState{userName: "ann@example.com", current: "Ann Lee", given: str("Ann"), family: str("Lee"), active: true}
	}
	cases := []struct {
		name     string
		ops      string
		wantName string
		check    func(u userState) bool
		scimType string // an error of this type, when set
	}{
		{"okta deactivation", `[{"op":"replace","value":{"active":false}}]`, "Ann Lee", func(u userState) bool { return !u.active }, ""},
		{"entra deactivation", `[{"op":"Replace","path":"active","value":"False"}]`, "Ann Lee", func(u userState) bool { return !u.active }, ""},
		{"entra reactivation", `[{"op":"Replace","path":"active","value":"True"}]`, "Ann Lee", func(u userState) bool { return u.active }, ""},
		{"schema-qualified path", `[{"op":"replace","path":"urn:ietf:params:scim:schemas:core:2.0:User:active","value":false}]`, "Ann Lee", func(u userState) bool { return !u.active }, ""},
		{"given name", `[{"op":"Replace","path":"name.givenName","value":"Jo"}]`, "Jo Lee", nil, ""},
		{"displayName wins", `[{"op":"replace","value":{"displayName":"AL","name":{"givenName":"Jo"}}}]`, "AL", nil, ""},
		{"formatted", `[{"op":"add","path":"name","value":{"formatted":"Ann B. Lee"}}]`, "Ann B. Lee", nil, ""},
		{"work email ignored", `[{"op":"Add","path":"emails[type eq \"work\"].value","value":"x@example.com"}]`, "Ann Lee", func(u userState) bool { return u.userName == "ann@example.com" }, ""},
		{"userName", `[{"op":"replace","path":"userName","value":"ann.lee@example.com"}]`, "Ann Lee", func(u userState) bool { return u.userName == "ann.lee@example.com" }, ""},
		{"externalId removed", `[{"op":"add","path":"externalId","value":"x"},{"op":"remove","path":"externalId"}]`, "Ann Lee", func(u userState) bool { return u.externalID == nil }, ""},
		{"extension ignored", `[{"op":"add","value":{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"x"}}}]`, "Ann Lee", nil, ""},
		{"active not boolean", `[{"op":"replace","path":"active","value":"yes"}]`, "", nil, scimInvalidValue},
		{"userName emptied", `[{"op":"replace","path":"userName","value":""}]`, "", nil, scimInvalidValue},
		{"remove userName", `[{"op":"remove","path":"userName"}]`, "", nil, scimInvalidValue},
		{"remove without path", `[{"op":"remove"}]`, "", nil, scimNoTarget},
		{"no path, not an object", `[{"op":"replace","value":false}]`, "", nil, scimInvalidValue},
		{"unknown op", `[{"op":"copy","path":"active","value":true}]`, "", nil, scimInvalidValue},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var ops []patchOp
			if err := json.Unmarshal([]byte(c.ops), &ops); err != nil {
				t.Fatal(err)
			}
			u := base()
			err := applyUserPatch(&u, ops)
			if c.scimType != "" {
				var se *Error
				if !errors.As(err, &se) || se.SCIMType != c.scimType {
					t.Fatalf("err = %v, want %s", err, c.scimType)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := u.name(); got != c.wantName {
				t.Errorf("name = %q, want %q", got, c.wantName)
			}
			if c.check != nil && !c.check(u) {
				t.Errorf("state %+v", u)
			}
		})
	}
}
