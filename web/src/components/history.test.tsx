// The audit trail's entry points: the navigation (workspace admins and
// project admins) and the History links of users, members, SDK keys,
// environments and flags.
import { screen, waitFor, within } from "@testing-library/react";
import EnvSettings from "../screens/admin/EnvSettings";
import Members from "../screens/admin/Members";
import SdkKeys from "../screens/admin/SdkKeys";
import Users from "../screens/admin/Users";
import FlagEditor from "../screens/flags/FlagEditor";
import { envUrl, flag, me, scopeRoutes } from "../test/fixtures";
import { renderScreen, type Call } from "../test/render";
import { auditAccessKey, historyPath } from "./history";
import { Layout } from "./Layout";

const editor = { ...me, id: 2, email: "pat@example.com", name: "Pat", role: "editor" as const };
const probes = (calls: Call[]) => calls.filter((c) => c.path === "/api/audit");

test("historyPath names the resource, and the environment or project its id needs", () => {
  expect(historyPath("flag", "checkout", { environment_id: "e1" })).toBe("/audit?environment_id=e1&resource_type=flag&resource_id=checkout");
  expect(historyPath("member", "7", { project_id: "p1" })).toBe("/audit?project_id=p1&resource_type=member&resource_id=7");
  expect(historyPath("user", "a b")).toBe("/audit?resource_type=user&resource_id=a+b");
});

test("workspace admins find the audit trail in the navigation without asking the server", async () => {
  const { calls } = renderScreen(<Layout />, { url: "/account/tokens", routes: scopeRoutes() });
  expect(await screen.findByRole("link", { name: "Audit trail" })).toHaveAttribute("href", "/audit");
  expect(probes(calls)).toEqual([]);
});

test("a project admin does, once the server lets them read it", async () => {
  const { calls } = renderScreen(<Layout />, {
    url: "/account/tokens",
    routes: { ...scopeRoutes(editor), "GET /api/audit": { items: [], next_cursor: null } },
  });
  expect(await screen.findByRole("link", { name: "Audit trail" })).toHaveAttribute("href", "/audit");
  expect(new URLSearchParams(probes(calls)[0]?.search).get("limit")).toBe("1");
});

test("anyone else does not", async () => {
  const { calls, queryClient } = renderScreen(<Layout />, {
    url: "/account/tokens",
    routes: { ...scopeRoutes(editor), "GET /api/audit": { status: 403, body: { error: "only workspace admins and project admins may read the audit trail" } } },
  });
  await screen.findByRole("link", { name: "Access tokens" });
  await waitFor(() => expect(queryClient.getQueryData(auditAccessKey(""))).toBe(false));
  expect(probes(calls)).toHaveLength(1);
  expect(screen.queryByRole("link", { name: "Audit trail" })).not.toBeInTheDocument();
});

test("a user's row links to the user's history", async () => {
  renderScreen(<Users />, {
    url: "/admin/users",
    routes: {
      "GET /api/auth/me": me,
      "GET /api/users": [{ id: 2, name: "Alice", email: "alice@example.com", role: "editor", active: true, sso_linked: false, created_at: "2026-01-02T00:00:00Z" }],
    },
  });
  expect(await screen.findByRole("link", { name: "History of alice@example.com" })).toHaveAttribute(
    "href",
    "/audit?resource_type=user&resource_id=2",
  );
});

test("a member's row links to the member's history in the project", async () => {
  renderScreen(<Members />, {
    ...envUrl("members"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/members": [{ user_id: 7, name: "Bo", email: "bo@example.com", role: "editor" }],
      "GET /api/users": [],
    },
  });
  expect(await screen.findByRole("link", { name: "History of Bo in this project" })).toHaveAttribute(
    "href",
    "/audit?project_id=p1&resource_type=member&resource_id=7",
  );
});

test("an SDK key's row links to the key's history, for a project admin too", async () => {
  const { calls } = renderScreen(<SdkKeys />, {
    ...envUrl("keys"),
    routes: {
      ...scopeRoutes(editor),
      "GET /api/audit": { items: [], next_cursor: null },
      "GET /api/projects/p1/keys": [
        { id: 3, name: "web", kind: "server", prefix: "sk_live_abcd", environment_id: "e1", environment_name: "Production", created_at: "2026-01-01T00:00:00Z" },
      ],
    },
  });
  const row = await screen.findByRole("row", { name: /web/ });
  expect(await within(row).findByRole("link", { name: "History of web" })).toHaveAttribute("href", "/audit?resource_type=sdk_key&resource_id=3");
  // Asked about this project.
  expect(new URLSearchParams(probes(calls)[0]?.search).get("project_id")).toBe("p1");
});

test("an environment's card links to its history", async () => {
  renderScreen(<EnvSettings />, {
    ...envUrl("settings"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/environments": [
        { id: "e1", project_id: "p1", name: "Production", slug: "production", color: "#d92d20", is_default: true, require_approval: false, created_at: "2026-01-01T00:00:00Z" },
      ],
    },
  });
  const card = await screen.findByRole("article", { name: "Production" });
  expect(within(card).getByRole("link", { name: "History of Production" })).toHaveAttribute(
    "href",
    "/audit?resource_type=environment&resource_id=e1",
  );
});

test("a flag links to its history in its environment; an editor without access sees no link", async () => {
  const current = flag();
  const routes = {
    "GET /api/environments/e1/flags": [current],
    "GET /api/environments/e1/flags/checkout": current,
    "GET /api/environments/e1/segments": [],
    "GET /api/environments/e1/flag-status": [],
  };
  const url = { url: "/projects/p1/envs/e1/flags/checkout", pattern: "/projects/:projectId/envs/:envId/flags/:key" };
  const first = renderScreen(<FlagEditor />, { ...url, routes: { ...scopeRoutes(), ...routes } });
  expect(await screen.findByRole("link", { name: "History of checkout" })).toHaveAttribute(
    "href",
    "/audit?environment_id=e1&resource_type=flag&resource_id=checkout",
  );
  first.unmount();

  const { calls, queryClient } = renderScreen(<FlagEditor />, {
    ...url,
    routes: { ...scopeRoutes(editor), ...routes, "GET /api/audit": { status: 403, body: { error: "you are not an admin of this project" } } },
  });
  await screen.findByRole("button", { name: "Archive" });
  await waitFor(() => expect(queryClient.getQueryData(auditAccessKey("p1"))).toBe(false));
  expect(new URLSearchParams(probes(calls)[0]?.search).get("project_id")).toBe("p1");
  expect(screen.queryByRole("link", { name: "History of checkout" })).not.toBeInTheDocument();
});
