// Pieces the three flag screens share: the PATCH call that may open a change
// request (202) and its notice.
import { Link } from "react-router";
import { ApiError, type Api } from "../../api/client";
import { Notice } from "../../components/ui";
import { envPath } from "../../lib/session";
import { isChangeRequest, type ChangeRequest, type Flag, type FlagPatch } from "./flagform";

export type PatchOutcome = { kind: "flag"; flag: Flag } | { kind: "change_request"; changeRequest: ChangeRequest };

// patchFlag sends a JSON merge patch; an environment that requires approval
// answers 202 with a change request and leaves the flag unchanged.
export async function patchFlag(api: Api, envId: string, key: string, patch: FlagPatch): Promise<PatchOutcome> {
  const { data, error, response } = await api.PATCH("/api/environments/{env_id}/flags/{key}", {
    params: { path: { env_id: envId, key } },
    body: patch,
    headers: { "Content-Type": "application/merge-patch+json" },
  });
  if (!response.ok) throw new ApiError(response.status, error);
  if (response.status === 202 && isChangeRequest(data)) return { kind: "change_request", changeRequest: data };
  return { kind: "flag", flag: data as Flag };
}

// ApprovalRequiredNotice says before any write that changes here need a reviewer.
export function ApprovalRequiredNotice({ env, projectId }: { env?: { id: string; name: string; require_approval: boolean }; projectId: string }) {
  if (!env?.require_approval) return null;
  return (
    <Notice kind="info">
      {env.name} requires approval: changes to flags open a change request that another person approves.{" "}
      <Link to={envPath(projectId, env.id, "change-requests")}>Review queue</Link>
    </Notice>
  );
}

export function ChangeRequestNotice({ cr, projectId, envId }: { cr: ChangeRequest; projectId: string; envId: string }) {
  return (
    <Notice kind="warning">
      Change request #{cr.id} created for <code>{cr.flag_key}</code> — waiting for approval. The flag stays unchanged until
      it is approved.{" "}
      <Link to={envPath(projectId, envId, "change-requests")}>Open change requests</Link>
    </Notice>
  );
}
