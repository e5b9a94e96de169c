// Test fixtures shared by the governance screen tests.
import type { Schemas } from "../../api/client";

export const ENV = "e1";
export const me = { id: 1, email: "rev@example.com", name: "Rev", role: "editor", workspace_name: "Acme", is_setup_complete: true };

export function flag(key: string, over: Partial<Schemas["Flag"]> = {}): Schemas["Flag"] {
  return {
    key,
    environment_id: ENV,
    is_enabled: false,
    rollout_percentage: null,
    description: null,
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
    created_at: "2026-11-01T10:00:00Z",
    updated_at: "2026-11-20T10:00:00Z",
    ...over,
  } as Schemas["Flag"];
}

export const baseRoutes = {
  "GET /api/auth/me": me,
  "GET /api/projects": [],
};
