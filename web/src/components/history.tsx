// Who may read the workspace audit trail, and the "History" link that opens
// it filtered to one resource. Workspace admins read everything; a project
// admin reads their projects' entries. The dashboard knows a workspace admin
// from /api/auth/me but has no list of the projects someone administers, so
// for everyone else it asks the server once (GET /api/audit?limit=1, scoped
// to the project when there is one): 403 means no.
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { isForbidden, unwrap, type Schemas } from "../api/client";
import { useApi } from "../api/context";
import { isAdmin, useMe } from "../lib/session";

export type ResourceType = Schemas["AuditResource"]["type"];

export const auditAccessKey = (projectId: string) => ["audit-access", projectId] as const;

// useAuditAccess is whether the signed-in user may read the trail (of
// projectId, when given).
export function useAuditAccess(projectId = ""): boolean {
  const api = useApi();
  const me = useMe();
  const admin = isAdmin(me.data);
  const probe = useQuery({
    queryKey: auditAccessKey(projectId),
    queryFn: async () => {
      try {
        await unwrap(api.GET("/api/audit", { params: { query: { limit: 1, ...(projectId ? { project_id: projectId } : {}) } } }));
        return true;
      } catch (err) {
        if (isForbidden(err)) return false;
        throw err;
      }
    },
    enabled: Boolean(me.data) && !admin,
    staleTime: 5 * 60_000,
  });
  return admin || probe.data === true;
}

// historyPath is the audit trail filtered to one resource. A flag's and a
// segment's id is its key, so they also name their environment; a member's
// is the user's id, so it names its project.
export function historyPath(type: ResourceType, id: string, within: { environment_id?: string; project_id?: string } = {}): string {
  const q = new URLSearchParams();
  if (within.project_id) q.set("project_id", within.project_id);
  if (within.environment_id) q.set("environment_id", within.environment_id);
  q.set("resource_type", type);
  q.set("resource_id", id);
  return `/audit?${q.toString()}`;
}

// HistoryLink opens a resource's history, for those who may read it (in
// projectId's project, when given). `of` names the resource for screen
// readers ("History of checkout").
export function HistoryLink({
  type,
  id,
  within,
  projectId,
  of,
  small = true,
}: {
  type: ResourceType;
  id: string;
  within?: { environment_id?: string; project_id?: string };
  projectId?: string;
  of: string;
  small?: boolean;
}) {
  const allowed = useAuditAccess(projectId);
  if (!allowed) return null;
  return (
    <Link className={`btn btn-secondary${small ? " btn-small" : ""}`} to={historyPath(type, id, within)} aria-label={`History of ${of}`}>
      History
    </Link>
  );
}
