package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
)

// These methods answer 501 until the flags and segments work lands; it deletes
// them from this file as it implements them.

// ListAudit is not built yet (flags and segments).
func (h *Handlers) ListAudit(context.Context, apiserver.ListAuditRequestObject) (apiserver.ListAuditResponseObject, error) {
	return nil, notImplemented("ListAudit")
}

// ListFlags is not built yet (flags and segments).
func (h *Handlers) ListFlags(context.Context, apiserver.ListFlagsRequestObject) (apiserver.ListFlagsResponseObject, error) {
	return nil, notImplemented("ListFlags")
}

// PutFlag is not built yet (flags and segments).
func (h *Handlers) PutFlag(context.Context, apiserver.PutFlagRequestObject) (apiserver.PutFlagResponseObject, error) {
	return nil, notImplemented("PutFlag")
}

// DeleteFlag is not built yet (flags and segments).
func (h *Handlers) DeleteFlag(context.Context, apiserver.DeleteFlagRequestObject) (apiserver.DeleteFlagResponseObject, error) {
	return nil, notImplemented("DeleteFlag")
}

// GetFlag is not built yet (flags and segments).
func (h *Handlers) GetFlag(context.Context, apiserver.GetFlagRequestObject) (apiserver.GetFlagResponseObject, error) {
	return nil, notImplemented("GetFlag")
}

// PatchFlag is not built yet (flags and segments).
func (h *Handlers) PatchFlag(context.Context, apiserver.PatchFlagRequestObject) (apiserver.PatchFlagResponseObject, error) {
	return nil, notImplemented("PatchFlag")
}

// ArchiveFlag is not built yet (flags and segments).
func (h *Handlers) ArchiveFlag(context.Context, apiserver.ArchiveFlagRequestObject) (apiserver.ArchiveFlagResponseObject, error) {
	return nil, notImplemented("ArchiveFlag")
}

// PromoteFlag is not built yet (flags and segments).
func (h *Handlers) PromoteFlag(context.Context, apiserver.PromoteFlagRequestObject) (apiserver.PromoteFlagResponseObject, error) {
	return nil, notImplemented("PromoteFlag")
}

// UnarchiveFlag is not built yet (flags and segments).
func (h *Handlers) UnarchiveFlag(context.Context, apiserver.UnarchiveFlagRequestObject) (apiserver.UnarchiveFlagResponseObject, error) {
	return nil, notImplemented("UnarchiveFlag")
}

// ListSegments is not built yet (flags and segments).
func (h *Handlers) ListSegments(context.Context, apiserver.ListSegmentsRequestObject) (apiserver.ListSegmentsResponseObject, error) {
	return nil, notImplemented("ListSegments")
}

// CreateSegment is not built yet (flags and segments).
func (h *Handlers) CreateSegment(context.Context, apiserver.CreateSegmentRequestObject) (apiserver.CreateSegmentResponseObject, error) {
	return nil, notImplemented("CreateSegment")
}

// DeleteSegment is not built yet (flags and segments).
func (h *Handlers) DeleteSegment(context.Context, apiserver.DeleteSegmentRequestObject) (apiserver.DeleteSegmentResponseObject, error) {
	return nil, notImplemented("DeleteSegment")
}

// GetSegment is not built yet (flags and segments).
func (h *Handlers) GetSegment(context.Context, apiserver.GetSegmentRequestObject) (apiserver.GetSegmentResponseObject, error) {
	return nil, notImplemented("GetSegment")
}

// PatchSegment is not built yet (flags and segments).
func (h *Handlers) PatchSegment(context.Context, apiserver.PatchSegmentRequestObject) (apiserver.PatchSegmentResponseObject, error) {
	return nil, notImplemented("PatchSegment")
}

// DiffFlags is not built yet (flags and segments).
func (h *Handlers) DiffFlags(context.Context, apiserver.DiffFlagsRequestObject) (apiserver.DiffFlagsResponseObject, error) {
	return nil, notImplemented("DiffFlags")
}
