// Queries every screen shares: who is signed in, the workspace, the projects
// and the project/environment named by the route.
import { useQuery } from "@tanstack/react-query";
import { useParams } from "react-router";
import { ApiError, unwrap, type Schemas } from "../api/client";
import { useApi } from "../api/context";

export const keys = {
  me: ["me"] as const,
  workspace: ["workspace"] as const,
  projects: ["projects"] as const,
  // The sign-in page's view of single sign-on (GET /api/auth/sso, public).
  ssoInfo: ["sso-info"] as const,
};

export function useWorkspace() {
  const api = useApi();
  return useQuery({
    queryKey: keys.workspace,
    queryFn: () => unwrap(api.GET("/api/auth/workspace")),
  });
}

// useMe resolves to null when nobody is signed in (401).
export function useMe() {
  const api = useApi();
  return useQuery({
    queryKey: keys.me,
    queryFn: async (): Promise<Schemas["CurrentUser"] | null> => {
      try {
        return await unwrap(api.GET("/api/auth/me"));
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) return null;
        throw err;
      }
    },
  });
}

export function useProjects() {
  const api = useApi();
  return useQuery({
    queryKey: keys.projects,
    queryFn: () => unwrap(api.GET("/api/projects")),
  });
}

export type Scope = {
  projectId: string;
  envId: string;
  project?: Schemas["Project"];
  env?: Schemas["EnvironmentSummary"];
  me?: Schemas["CurrentUser"];
};

// useScope reads :projectId and :envId from the route and finds them in the
// project list (which carries every environment's summary).
export function useScope(): Scope {
  const { projectId = "", envId = "" } = useParams();
  const projects = useProjects();
  const me = useMe();
  const project = projects.data?.find((p) => p.id === projectId);
  const env = project?.environments.find((e) => e.id === envId);
  return { projectId, envId, project, env, me: me.data ?? undefined };
}

export function envPath(projectId: string, envId: string, rest = ""): string {
  return `/projects/${projectId}/envs/${envId}${rest ? "/" + rest : ""}`;
}

// isAdmin: workspace admins; project roles are enforced by the server, which
// answers 403 — screens show that message rather than guessing roles.
export function isAdmin(me?: Schemas["CurrentUser"] | null): boolean {
  return me?.role === "admin";
}
