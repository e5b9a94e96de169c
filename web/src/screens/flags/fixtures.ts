// Test fixtures of the flag screens.
import type { Flag } from "./flagform";

export const me = { id: 1, email: "a@example.com", name: "A", role: "admin", workspace_name: "Acme", is_setup_complete: true };
export const projects = [
  {
    id: "p1",
    name: "Shop",
    slug: "shop",
    environment_count: 2,
    member_count: 1,
    created_at: "2026-11-01T00:00:00Z",
    environments: [
      { id: "e1", name: "Production", slug: "production", color: "#d33", is_default: true },
      { id: "e2", name: "Staging", slug: "staging", color: "#3a3", is_default: false },
    ],
  },
];
export const scopeRoutes = { "GET /api/auth/me": me, "GET /api/projects": projects };

export function flag(over: Partial<Flag> = {}): Flag {
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
    version: 3,
    created_at: "2026-11-01T00:00:00Z",
    updated_at: "2026-11-20T00:00:00Z",
    ...over,
  };
}

