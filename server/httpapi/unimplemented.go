package httpapi

import (
	"context"

	"github.com/switchyard/switchyard/gen/apiserver"
)

// The methods below answer 501 until the issue that builds them lands; each
// issue deletes its stubs from this file as it implements them.

// Login is not built yet (identity and access control).
func (h *Handlers) Login(context.Context, apiserver.LoginRequestObject) (apiserver.LoginResponseObject, error) {
	return nil, notImplemented("Login")
}

// Logout is not built yet (identity and access control).
func (h *Handlers) Logout(context.Context, apiserver.LogoutRequestObject) (apiserver.LogoutResponseObject, error) {
	return nil, notImplemented("Logout")
}

// GetCurrentUser is not built yet (identity and access control).
func (h *Handlers) GetCurrentUser(context.Context, apiserver.GetCurrentUserRequestObject) (apiserver.GetCurrentUserResponseObject, error) {
	return nil, notImplemented("GetCurrentUser")
}

// SetupWorkspace is not built yet (identity and access control).
func (h *Handlers) SetupWorkspace(context.Context, apiserver.SetupWorkspaceRequestObject) (apiserver.SetupWorkspaceResponseObject, error) {
	return nil, notImplemented("SetupWorkspace")
}

// ListAudit is not built yet (flags and segments).
func (h *Handlers) ListAudit(context.Context, apiserver.ListAuditRequestObject) (apiserver.ListAuditResponseObject, error) {
	return nil, notImplemented("ListAudit")
}

// ListChangeRequests is not built yet (governance).
func (h *Handlers) ListChangeRequests(context.Context, apiserver.ListChangeRequestsRequestObject) (apiserver.ListChangeRequestsResponseObject, error) {
	return nil, notImplemented("ListChangeRequests")
}

// CancelChangeRequest is not built yet (governance).
func (h *Handlers) CancelChangeRequest(context.Context, apiserver.CancelChangeRequestRequestObject) (apiserver.CancelChangeRequestResponseObject, error) {
	return nil, notImplemented("CancelChangeRequest")
}

// ApproveChangeRequest is not built yet (governance).
func (h *Handlers) ApproveChangeRequest(context.Context, apiserver.ApproveChangeRequestRequestObject) (apiserver.ApproveChangeRequestResponseObject, error) {
	return nil, notImplemented("ApproveChangeRequest")
}

// RejectChangeRequest is not built yet (governance).
func (h *Handlers) RejectChangeRequest(context.Context, apiserver.RejectChangeRequestRequestObject) (apiserver.RejectChangeRequestResponseObject, error) {
	return nil, notImplemented("RejectChangeRequest")
}

// IngestEvents is not built yet (measurement).
func (h *Handlers) IngestEvents(context.Context, apiserver.IngestEventsRequestObject) (apiserver.IngestEventsResponseObject, error) {
	return nil, notImplemented("IngestEvents")
}

// ListEventKeys is not built yet (measurement).
func (h *Handlers) ListEventKeys(context.Context, apiserver.ListEventKeysRequestObject) (apiserver.ListEventKeysResponseObject, error) {
	return nil, notImplemented("ListEventKeys")
}

// ListExperiments is not built yet (measurement).
func (h *Handlers) ListExperiments(context.Context, apiserver.ListExperimentsRequestObject) (apiserver.ListExperimentsResponseObject, error) {
	return nil, notImplemented("ListExperiments")
}

// CreateExperiment is not built yet (measurement).
func (h *Handlers) CreateExperiment(context.Context, apiserver.CreateExperimentRequestObject) (apiserver.CreateExperimentResponseObject, error) {
	return nil, notImplemented("CreateExperiment")
}

// DeleteExperiment is not built yet (measurement).
func (h *Handlers) DeleteExperiment(context.Context, apiserver.DeleteExperimentRequestObject) (apiserver.DeleteExperimentResponseObject, error) {
	return nil, notImplemented("DeleteExperiment")
}

// GetExperiment is not built yet (measurement).
func (h *Handlers) GetExperiment(context.Context, apiserver.GetExperimentRequestObject) (apiserver.GetExperimentResponseObject, error) {
	return nil, notImplemented("GetExperiment")
}

// PatchExperiment is not built yet (measurement).
func (h *Handlers) PatchExperiment(context.Context, apiserver.PatchExperimentRequestObject) (apiserver.PatchExperimentResponseObject, error) {
	return nil, notImplemented("PatchExperiment")
}

// GetExperimentResults is not built yet (measurement).
func (h *Handlers) GetExperimentResults(context.Context, apiserver.GetExperimentResultsRequestObject) (apiserver.GetExperimentResultsResponseObject, error) {
	return nil, notImplemented("GetExperimentResults")
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

// ListFlagScheduledChanges is not built yet (governance).
func (h *Handlers) ListFlagScheduledChanges(context.Context, apiserver.ListFlagScheduledChangesRequestObject) (apiserver.ListFlagScheduledChangesResponseObject, error) {
	return nil, notImplemented("ListFlagScheduledChanges")
}

// CreateScheduledChange is not built yet (governance).
func (h *Handlers) CreateScheduledChange(context.Context, apiserver.CreateScheduledChangeRequestObject) (apiserver.CreateScheduledChangeResponseObject, error) {
	return nil, notImplemented("CreateScheduledChange")
}

// UnarchiveFlag is not built yet (flags and segments).
func (h *Handlers) UnarchiveFlag(context.Context, apiserver.UnarchiveFlagRequestObject) (apiserver.UnarchiveFlagResponseObject, error) {
	return nil, notImplemented("UnarchiveFlag")
}

// ListImpressions is not built yet (measurement).
func (h *Handlers) ListImpressions(context.Context, apiserver.ListImpressionsRequestObject) (apiserver.ListImpressionsResponseObject, error) {
	return nil, notImplemented("ListImpressions")
}

// IngestImpressions is not built yet (measurement).
func (h *Handlers) IngestImpressions(context.Context, apiserver.IngestImpressionsRequestObject) (apiserver.IngestImpressionsResponseObject, error) {
	return nil, notImplemented("IngestImpressions")
}

// GetExposure is not built yet (measurement).
func (h *Handlers) GetExposure(context.Context, apiserver.GetExposureRequestObject) (apiserver.GetExposureResponseObject, error) {
	return nil, notImplemented("GetExposure")
}

// GetImpressionStats is not built yet (measurement).
func (h *Handlers) GetImpressionStats(context.Context, apiserver.GetImpressionStatsRequestObject) (apiserver.GetImpressionStatsResponseObject, error) {
	return nil, notImplemented("GetImpressionStats")
}

// ListIntegrations is not built yet (governance).
func (h *Handlers) ListIntegrations(context.Context, apiserver.ListIntegrationsRequestObject) (apiserver.ListIntegrationsResponseObject, error) {
	return nil, notImplemented("ListIntegrations")
}

// CreateIntegration is not built yet (governance).
func (h *Handlers) CreateIntegration(context.Context, apiserver.CreateIntegrationRequestObject) (apiserver.CreateIntegrationResponseObject, error) {
	return nil, notImplemented("CreateIntegration")
}

// DeleteIntegration is not built yet (governance).
func (h *Handlers) DeleteIntegration(context.Context, apiserver.DeleteIntegrationRequestObject) (apiserver.DeleteIntegrationResponseObject, error) {
	return nil, notImplemented("DeleteIntegration")
}

// PatchIntegration is not built yet (governance).
func (h *Handlers) PatchIntegration(context.Context, apiserver.PatchIntegrationRequestObject) (apiserver.PatchIntegrationResponseObject, error) {
	return nil, notImplemented("PatchIntegration")
}

// ListIntegrationDeliveries is not built yet (governance).
func (h *Handlers) ListIntegrationDeliveries(context.Context, apiserver.ListIntegrationDeliveriesRequestObject) (apiserver.ListIntegrationDeliveriesResponseObject, error) {
	return nil, notImplemented("ListIntegrationDeliveries")
}

// TestIntegration is not built yet (governance).
func (h *Handlers) TestIntegration(context.Context, apiserver.TestIntegrationRequestObject) (apiserver.TestIntegrationResponseObject, error) {
	return nil, notImplemented("TestIntegration")
}

// ListScheduledChanges is not built yet (governance).
func (h *Handlers) ListScheduledChanges(context.Context, apiserver.ListScheduledChangesRequestObject) (apiserver.ListScheduledChangesResponseObject, error) {
	return nil, notImplemented("ListScheduledChanges")
}

// DeleteScheduledChange is not built yet (governance).
func (h *Handlers) DeleteScheduledChange(context.Context, apiserver.DeleteScheduledChangeRequestObject) (apiserver.DeleteScheduledChangeResponseObject, error) {
	return nil, notImplemented("DeleteScheduledChange")
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

// ListWebhooks is not built yet (governance).
func (h *Handlers) ListWebhooks(context.Context, apiserver.ListWebhooksRequestObject) (apiserver.ListWebhooksResponseObject, error) {
	return nil, notImplemented("ListWebhooks")
}

// CreateWebhook is not built yet (governance).
func (h *Handlers) CreateWebhook(context.Context, apiserver.CreateWebhookRequestObject) (apiserver.CreateWebhookResponseObject, error) {
	return nil, notImplemented("CreateWebhook")
}

// DeleteWebhook is not built yet (governance).
func (h *Handlers) DeleteWebhook(context.Context, apiserver.DeleteWebhookRequestObject) (apiserver.DeleteWebhookResponseObject, error) {
	return nil, notImplemented("DeleteWebhook")
}

// PatchWebhook is not built yet (governance).
func (h *Handlers) PatchWebhook(context.Context, apiserver.PatchWebhookRequestObject) (apiserver.PatchWebhookResponseObject, error) {
	return nil, notImplemented("PatchWebhook")
}

// ListWebhookDeliveries is not built yet (governance).
func (h *Handlers) ListWebhookDeliveries(context.Context, apiserver.ListWebhookDeliveriesRequestObject) (apiserver.ListWebhookDeliveriesResponseObject, error) {
	return nil, notImplemented("ListWebhookDeliveries")
}

// ListProjects is not built yet (identity and access control).
func (h *Handlers) ListProjects(context.Context, apiserver.ListProjectsRequestObject) (apiserver.ListProjectsResponseObject, error) {
	return nil, notImplemented("ListProjects")
}

// CreateProject is not built yet (identity and access control).
func (h *Handlers) CreateProject(context.Context, apiserver.CreateProjectRequestObject) (apiserver.CreateProjectResponseObject, error) {
	return nil, notImplemented("CreateProject")
}

// DeleteProject is not built yet (identity and access control).
func (h *Handlers) DeleteProject(context.Context, apiserver.DeleteProjectRequestObject) (apiserver.DeleteProjectResponseObject, error) {
	return nil, notImplemented("DeleteProject")
}

// RenameProject is not built yet (identity and access control).
func (h *Handlers) RenameProject(context.Context, apiserver.RenameProjectRequestObject) (apiserver.RenameProjectResponseObject, error) {
	return nil, notImplemented("RenameProject")
}

// ListEnvironments is not built yet (identity and access control).
func (h *Handlers) ListEnvironments(context.Context, apiserver.ListEnvironmentsRequestObject) (apiserver.ListEnvironmentsResponseObject, error) {
	return nil, notImplemented("ListEnvironments")
}

// CreateEnvironment is not built yet (identity and access control).
func (h *Handlers) CreateEnvironment(context.Context, apiserver.CreateEnvironmentRequestObject) (apiserver.CreateEnvironmentResponseObject, error) {
	return nil, notImplemented("CreateEnvironment")
}

// DeleteEnvironment is not built yet (identity and access control).
func (h *Handlers) DeleteEnvironment(context.Context, apiserver.DeleteEnvironmentRequestObject) (apiserver.DeleteEnvironmentResponseObject, error) {
	return nil, notImplemented("DeleteEnvironment")
}

// UpdateEnvironment is not built yet (identity and access control).
func (h *Handlers) UpdateEnvironment(context.Context, apiserver.UpdateEnvironmentRequestObject) (apiserver.UpdateEnvironmentResponseObject, error) {
	return nil, notImplemented("UpdateEnvironment")
}

// SetDefaultEnvironment is not built yet (identity and access control).
func (h *Handlers) SetDefaultEnvironment(context.Context, apiserver.SetDefaultEnvironmentRequestObject) (apiserver.SetDefaultEnvironmentResponseObject, error) {
	return nil, notImplemented("SetDefaultEnvironment")
}

// SetRequireApproval is not built yet (identity and access control).
func (h *Handlers) SetRequireApproval(context.Context, apiserver.SetRequireApprovalRequestObject) (apiserver.SetRequireApprovalResponseObject, error) {
	return nil, notImplemented("SetRequireApproval")
}

// DiffFlags is not built yet (flags and segments).
func (h *Handlers) DiffFlags(context.Context, apiserver.DiffFlagsRequestObject) (apiserver.DiffFlagsResponseObject, error) {
	return nil, notImplemented("DiffFlags")
}

// ListSdkKeys is not built yet (identity and access control).
func (h *Handlers) ListSdkKeys(context.Context, apiserver.ListSdkKeysRequestObject) (apiserver.ListSdkKeysResponseObject, error) {
	return nil, notImplemented("ListSdkKeys")
}

// CreateSdkKey is not built yet (identity and access control).
func (h *Handlers) CreateSdkKey(context.Context, apiserver.CreateSdkKeyRequestObject) (apiserver.CreateSdkKeyResponseObject, error) {
	return nil, notImplemented("CreateSdkKey")
}

// RevokeSdkKey is not built yet (identity and access control).
func (h *Handlers) RevokeSdkKey(context.Context, apiserver.RevokeSdkKeyRequestObject) (apiserver.RevokeSdkKeyResponseObject, error) {
	return nil, notImplemented("RevokeSdkKey")
}

// ListMembers is not built yet (identity and access control).
func (h *Handlers) ListMembers(context.Context, apiserver.ListMembersRequestObject) (apiserver.ListMembersResponseObject, error) {
	return nil, notImplemented("ListMembers")
}

// AddMember is not built yet (identity and access control).
func (h *Handlers) AddMember(context.Context, apiserver.AddMemberRequestObject) (apiserver.AddMemberResponseObject, error) {
	return nil, notImplemented("AddMember")
}

// RemoveMember is not built yet (identity and access control).
func (h *Handlers) RemoveMember(context.Context, apiserver.RemoveMemberRequestObject) (apiserver.RemoveMemberResponseObject, error) {
	return nil, notImplemented("RemoveMember")
}

// UpdateMember is not built yet (identity and access control).
func (h *Handlers) UpdateMember(context.Context, apiserver.UpdateMemberRequestObject) (apiserver.UpdateMemberResponseObject, error) {
	return nil, notImplemented("UpdateMember")
}

// ListTokens is not built yet (identity and access control).
func (h *Handlers) ListTokens(context.Context, apiserver.ListTokensRequestObject) (apiserver.ListTokensResponseObject, error) {
	return nil, notImplemented("ListTokens")
}

// CreateToken is not built yet (identity and access control).
func (h *Handlers) CreateToken(context.Context, apiserver.CreateTokenRequestObject) (apiserver.CreateTokenResponseObject, error) {
	return nil, notImplemented("CreateToken")
}

// DeleteToken is not built yet (identity and access control).
func (h *Handlers) DeleteToken(context.Context, apiserver.DeleteTokenRequestObject) (apiserver.DeleteTokenResponseObject, error) {
	return nil, notImplemented("DeleteToken")
}

// ListUsers is not built yet (identity and access control).
func (h *Handlers) ListUsers(context.Context, apiserver.ListUsersRequestObject) (apiserver.ListUsersResponseObject, error) {
	return nil, notImplemented("ListUsers")
}

// CreateUser is not built yet (identity and access control).
func (h *Handlers) CreateUser(context.Context, apiserver.CreateUserRequestObject) (apiserver.CreateUserResponseObject, error) {
	return nil, notImplemented("CreateUser")
}

// DeleteUser is not built yet (identity and access control).
func (h *Handlers) DeleteUser(context.Context, apiserver.DeleteUserRequestObject) (apiserver.DeleteUserResponseObject, error) {
	return nil, notImplemented("DeleteUser")
}

// UpdateUser is not built yet (identity and access control).
func (h *Handlers) UpdateUser(context.Context, apiserver.UpdateUserRequestObject) (apiserver.UpdateUserResponseObject, error) {
	return nil, notImplemented("UpdateUser")
}
