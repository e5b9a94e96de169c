// Test fixtures shared by the admin and segment screen tests.
import type { Schemas } from "../../api/client";

export const me: Schemas["CurrentUser"] = {
  id: 1,
  email: "ada@example.com",
  name: "Ada",
  role: "admin",
  workspace_name: "Acme",
  is_setup_complete: true,
};

export const project: Schemas["Project"] = {
  id: "p1",
  name: "Storefront",
  slug: "storefront",
  environment_count: 2,
  member_count: 2,
  created_at: "2026-01-01T00:00:00Z",
  environments: [
    { id: "e1", name: "Production", slug: "production", color: "#d92d20", is_default: false },
    { id: "e2", name: "Staging", slug: "staging", color: "#f5a524", is_default: true },
  ],
};

export function scopeRoutes(user: Schemas["CurrentUser"] = me) {
  return { "GET /api/auth/me": user, "GET /api/projects": [project] };
}

export const envUrl = (rest: string) => ({
  url: `/projects/p1/envs/e1/${rest}`,
  pattern: `/projects/:projectId/envs/:envId/${rest}`,
});
