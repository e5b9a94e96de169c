// The single sign-on form's state, its checks and the PUT body it becomes
// (docs/sso.md has the fields and their defaults).
import type { Schemas } from "../../api/client";

export type MappingRow = { key: number; group: string; project_id: string; role: Schemas["Role"] };

export type SsoForm = {
  issuer: string;
  client_id: string;
  client_secret: string;
  scopes: string;
  groups_claim: string;
  domains: string;
  auto_provision: boolean;
  password_login: Schemas["SSOPasswordLogin"];
  admin_groups: string;
  mappings: MappingRow[];
};

// The roles a mapping can give, least first.
export const MAPPING_ROLES: Schemas["Role"][] = ["viewer", "editor", "admin"];

let nextRowKey = 1;
export function newMappingRow(over: Partial<Omit<MappingRow, "key">> = {}): MappingRow {
  return { key: nextRowKey++, group: "", project_id: "", role: "viewer", ...over };
}

// ssoFormFrom fills the form from stored settings, or with the server's
// defaults while single sign-on is off. The secret is never returned, so it
// always starts empty.
export function ssoFormFrom(s: Schemas["SSOSettings"] | null): SsoForm {
  return {
    issuer: s?.issuer ?? "",
    client_id: s?.client_id ?? "",
    client_secret: "",
    scopes: (s?.scopes ?? ["openid", "email", "profile"]).join(" "),
    groups_claim: s?.groups_claim ?? "groups",
    domains: (s?.allowed_email_domains ?? []).join(", "),
    auto_provision: s?.auto_provision ?? true,
    password_login: s?.password_login ?? "enabled",
    admin_groups: (s?.admin_groups ?? []).join(", "),
    mappings: (s?.group_mappings ?? []).map((m) => newMappingRow(m)),
  };
}

// Scopes and domains hold no spaces, so commas and spaces both separate
// them; group names may hold spaces, so only commas (and new lines) do.
export const splitWords = (text: string) => text.split(/[\s,]+/).filter(Boolean);
export const splitGroups = (text: string) =>
  text
    .split(/[,\n]/)
    .map((g) => g.trim())
    .filter(Boolean);

// issuerProblem is what is wrong with an issuer URL, the way the server
// checks it: http or https, a host, no query or fragment.
export function issuerProblem(issuer: string): string | undefined {
  const text = issuer.trim();
  if (!text) return "Enter the provider's issuer URL, such as https://idp.example.com.";
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "Enter a full URL starting with https://, such as https://idp.example.com.";
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || !url.host) {
    return "The issuer must be an http or https URL, such as https://idp.example.com.";
  }
  if (url.search || url.hash || text.includes("?") || text.includes("#")) {
    return "The issuer has no query (?…) or fragment (#…).";
  }
  return undefined;
}

// mappingField names a mapping row's field as the server's details do.
export const mappingField = (i: number, field: "group" | "project_id" | "role") => `group_mappings[${i}].${field}`;

// validateSso checks what the server would refuse before it is asked.
// Keys are the API's field names, so local and server problems share places.
export function validateSso(f: SsoForm, secretStored: boolean): Record<string, string> {
  const errors: Record<string, string> = {};
  const issuer = issuerProblem(f.issuer);
  if (issuer) errors.issuer = issuer;
  if (!f.client_id.trim()) errors.client_id = "Enter the client ID the provider gave this application.";
  if (!f.client_secret.trim()) {
    errors.client_secret = secretStored
      ? "Enter the client secret again: the stored one is never shown, and every save needs it."
      : "Enter the client secret the provider gave this application.";
  }
  if (!splitWords(f.scopes).includes("openid")) errors.scopes = "Include openid (for example: openid email profile).";
  const badDomains = splitWords(f.domains).filter((d) => /[@/]/.test(d.replace(/^@/, "")));
  if (badDomains.length > 0) {
    errors.allowed_email_domains = `Not a domain name: ${badDomains.join(", ")}. Enter domains such as example.com.`;
  }
  f.mappings.forEach((m, i) => {
    if (!m.group.trim()) errors[mappingField(i, "group")] = "Enter the group's name (or id) as the provider sends it.";
    if (!m.project_id) errors[mappingField(i, "project_id")] = "Choose a project.";
    if (!MAPPING_ROLES.includes(m.role)) errors[mappingField(i, "role")] = "Choose a role.";
  });
  return errors;
}

// ssoBody is the PUT body: lists split and trimmed, a blank groups claim
// left to the server's default.
export function ssoBody(f: SsoForm): Schemas["SSOSettingsInput"] {
  const groupsClaim = f.groups_claim.trim();
  return {
    issuer: f.issuer.trim(),
    client_id: f.client_id.trim(),
    client_secret: f.client_secret,
    scopes: splitWords(f.scopes),
    ...(groupsClaim ? { groups_claim: groupsClaim } : {}),
    allowed_email_domains: splitWords(f.domains),
    auto_provision: f.auto_provision,
    group_mappings: f.mappings.map((m) => ({ group: m.group.trim(), project_id: m.project_id, role: m.role })),
    admin_groups: splitGroups(f.admin_groups),
    password_login: f.password_login,
  };
}
