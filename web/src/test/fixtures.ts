// Test fixtures shared by the screen tests (each area used to have its own
// copy): the signed-in admin, a project with two environments, the routes
// useScope needs, and a flag builder.
import type { Schemas } from "../api/client";

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
    { id: "e1", name: "Production", slug: "production", color: "#d92d20", is_default: false, require_approval: false },
    { id: "e2", name: "Staging", slug: "staging", color: "#f5a524", is_default: true, require_approval: true },
  ],
};

export function scopeRoutes(user: Schemas["CurrentUser"] = me) {
  return { "GET /api/auth/me": user, "GET /api/projects": [project] };
}

// envUrl is renderScreen's url and pattern for a screen of environment e1.
export const envUrl = (rest: string) => ({
  url: `/projects/p1/envs/e1/${rest}`,
  pattern: `/projects/:projectId/envs/:envId/${rest}`,
});

export function flag(over: Partial<Schemas["Flag"]> = {}): Schemas["Flag"] {
  return {
    key: "checkout",
    environment_id: "e1",
    is_enabled: true,
    rollout_percentage: null,
    description: "New checkout",
    rules: [],
    flag_type: "boolean",
    default_value: true,
    disabled_value: false,
    variants: [],
    prerequisites: [],
    tags: [],
    owner_email: null,
    archived_at: null,
    client_side: false,
    version: 3,
    created_at: "2026-11-01T00:00:00Z",
    updated_at: "2026-11-20T00:00:00Z",
    ...over,
  };
}
