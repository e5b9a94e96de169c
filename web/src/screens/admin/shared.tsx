// Role options shared by the admin screens (members and users).
import type { Schemas } from "../../api/client";

export const ROLES: Schemas["Role"][] = ["admin", "editor", "viewer"];

export const ROLE_HINT: Record<Schemas["Role"], string> = {
  admin: "manages members, environments and keys",
  editor: "changes flags and segments",
  viewer: "read-only",
};
