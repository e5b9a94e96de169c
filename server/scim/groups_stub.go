package scim

// groups answers /Groups; groups are not served yet.
func (h *handler) groups(_ *request, _ string) error { return errNotFound("resource") }
