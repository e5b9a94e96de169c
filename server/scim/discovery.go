package scim

// Discovery resources (RFC 7644, section 4; RFC 7643, sections 5 to 7).

const (
	groupSchema  = "urn:ietf:params:scim:schemas:core:2.0:Group"
	configSchema = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
	typeSchema   = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
	schemaSchema = "urn:ietf:params:scim:schemas:core:2.0:Schema"
)

func serviceProviderConfig(base string) map[string]any {
	unsupported := map[string]any{"supported": false}
	return map[string]any{
		"schemas":        []string{configSchema},
		"patch":          map[string]any{"supported": true},
		"bulk":           map[string]any{"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
		"filter":         map[string]any{"supported": true, "maxResults": maxCount},
		"changePassword": unsupported,
		"sort":           unsupported,
		"etag":           unsupported,
		"authenticationSchemes": []map[string]any{{
			"type": "oauthbearertoken", "name": "SCIM token", "primary": true,
			"description": "A SCIM token (scim_…) created by a workspace admin, as Authorization: Bearer.",
		}},
		"meta": map[string]any{"resourceType": "ServiceProviderConfig", "location": base + "/ServiceProviderConfig"},
	}
}

func resourceType(base, id, endpoint, schema string) map[string]any {
	return map[string]any{
		"schemas": []string{typeSchema}, "id": id, "name": id, "endpoint": endpoint, "schema": schema,
		"meta": map[string]any{"resourceType": "ResourceType", "location": base + "/ResourceTypes/" + id},
	}
}

// resourceTypes answers the list, or the one type id names.
func resourceTypes(base, id string) (any, error) {
	all := []any{resourceType(base, "User", "/Users", userSchema), resourceType(base, "Group", "/Groups", groupSchema)}
	return pick(all, id, "resource type")
}

func attribute(name, typ string, required bool, extra map[string]any) map[string]any {
	a := map[string]any{
		"name": name, "type": typ, "multiValued": false, "required": required, "caseExact": false,
		"mutability": "readWrite", "returned": "default", "uniqueness": "none",
	}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

func schemaResource(base, id, name string, attrs []any) map[string]any {
	return map[string]any{
		"schemas": []string{schemaSchema}, "id": id, "name": name, "attributes": attrs,
		"meta": map[string]any{"resourceType": "Schema", "location": base + "/Schemas/" + id},
	}
}

// schemas answers the User and Group schemas, or the one id names: the
// attributes Switchyard keeps.
func schemas(base, id string) (any, error) {
	user := schemaResource(base, userSchema, "User", []any{
		attribute("userName", "string", true, map[string]any{"uniqueness": "server", "description": "The user's e-mail address."}),
		attribute("name", "complex", false, map[string]any{"subAttributes": []any{
			attribute("formatted", "string", false, nil),
			attribute("givenName", "string", false, nil),
			attribute("familyName", "string", false, nil),
		}}),
		attribute("displayName", "string", false, nil),
		attribute("emails", "complex", false, map[string]any{"multiValued": true, "mutability": "readOnly",
			"description": "The userName, as the primary work address.", "subAttributes": []any{
				attribute("value", "string", false, nil),
				attribute("type", "string", false, nil),
				attribute("primary", "boolean", false, nil),
			}}),
		attribute("active", "boolean", false, nil),
		attribute("externalId", "string", false, map[string]any{"caseExact": true}),
	})
	group := schemaResource(base, groupSchema, "Group", []any{
		attribute("displayName", "string", true, map[string]any{"uniqueness": "server"}),
		attribute("members", "complex", false, map[string]any{"multiValued": true, "subAttributes": []any{
			attribute("value", "string", false, map[string]any{"mutability": "immutable"}),
			attribute("display", "string", false, map[string]any{"mutability": "readOnly"}),
		}}),
		attribute("externalId", "string", false, map[string]any{"caseExact": true}),
	})
	return pick([]any{user, group}, id, "schema")
}

// pick answers the list response of all, or the one resource whose id is id.
func pick(all []any, id, what string) (any, error) {
	if id == "" {
		return listResponse(all, int64(len(all)), 1), nil
	}
	for _, r := range all {
		if r.(map[string]any)["id"] == id {
			return r, nil
		}
	}
	return nil, errNotFound(what)
}
