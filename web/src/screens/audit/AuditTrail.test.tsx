import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Schemas } from "../../api/client";
import { accessibilityProblems } from "../../test/axe";
import { flag, me, project, scopeRoutes } from "../../test/fixtures";
import { renderScreen, type Call, type Routes } from "../../test/render";
import AuditTrail, { actorSummary, filtersOf, resourceSummary } from "./AuditTrail";

type Entry = Schemas["WorkspaceAuditEntry"];
const projectAdmin = { ...me, id: 2, email: "pat@example.com", name: "Pat", role: "editor" as const };

function entry(id: number, over: Partial<Entry> = {}): Entry {
  return {
    id,
    at: "2026-11-22T09:00:00Z",
    action: "flag.updated",
    actor: { kind: "user", id: "1", email: "ada@example.com", label: null },
    resource: { type: "flag", id: "checkout", key: "checkout", name: null },
    project_id: "p1",
    environment_id: "e1",
    before: flag({ is_enabled: false, version: 3 }),
    after: flag({ is_enabled: true, version: 4 }),
    request: { request_id: "req-7f3a", ip: "203.0.113.9", user_agent: "Mozilla/5.0 (X11) Firefox/140.0" },
    hash: "ab".repeat(32),
    ...over,
  };
}

const tokenEntry = entry(41, {
  action: "sdk_key.created",
  actor: { kind: "token", id: "1", email: "ada@example.com", label: "sy_pat_9f2c" },
  resource: { type: "sdk_key", id: "12", key: null, name: "web" },
  environment_id: "e2",
  before: null,
  after: { id: 12, name: "web", prefix: "sk_live_ab12", kind: "server" },
  request: { request_id: "req-1", ip: "198.51.100.4", user_agent: "curl/8.5" },
  hash: null,
});

const trailCalls = (calls: Call[]) => calls.filter((c) => c.path === "/api/audit");
const query = (c?: Call) => Object.fromEntries(new URLSearchParams(c?.search));

function open(url: string, routes: Routes, user = me) {
  return renderScreen(<AuditTrail />, { url, pattern: "/audit", routes: { ...scopeRoutes(user), ...routes } });
}

test("helpers: filters from the address, who acted, what was changed", () => {
  expect(filtersOf(new URLSearchParams("resource_type=flag&resource_id=checkout&page=2&actor=%20"))).toEqual({
    resource_type: "flag",
    resource_id: "checkout",
  });
  expect(actorSummary({ kind: "token", id: "1", email: "ada@example.com", label: "sy_pat_9f2c" })).toBe("ada@example.com (token sy_pat_9f2c…)");
  expect(actorSummary({ kind: "anonymous", id: null, email: "eve@example.com", label: null })).toBe("anonymous (tried eve@example.com)");
  expect(actorSummary({ kind: "system", id: null, email: null, label: "retention" })).toBe("system: retention");
  expect(resourceSummary({ type: "sdk_key", id: "12", key: null, name: "web" })).toBe("web (12)");
  expect(resourceSummary({ type: "flag", id: "checkout", key: "checkout", name: null })).toBe("checkout");
});

test("the address's filters are sent; each entry opens to its diff, actor and request", async () => {
  const { calls } = open("/audit?resource_type=flag&resource_id=checkout&environment_id=e1", {
    "GET /api/audit": { items: [entry(42), tokenEntry], next_cursor: null },
  });
  const row = await screen.findByRole("row", { name: /flag\.updated/ });
  expect(query(trailCalls(calls)[0])).toEqual({ resource_type: "flag", resource_id: "checkout", environment_id: "e1" });
  expect(screen.getByText(/The history of flag checkout in Production/)).toBeInTheDocument();
  expect(row).toHaveTextContent("ada@example.com");
  expect(row).toHaveTextContent("Storefront · Production");
  expect(within(row).getByRole("link", { name: "History of flag checkout" })).toHaveAttribute(
    "href",
    "/audit?environment_id=e1&resource_type=flag&resource_id=checkout",
  );
  const tokenRow = screen.getByRole("row", { name: /sdk_key\.created/ });
  expect(tokenRow).toHaveTextContent("ada@example.com (token sy_pat_9f2c…)");
  expect(within(tokenRow).getByRole("link", { name: "History of sdk key web (12)" })).toHaveAttribute(
    "href",
    "/audit?resource_type=sdk_key&resource_id=12",
  );

  const details = within(row).getByRole("button", { name: "Details of entry 42" });
  expect(details).toHaveAttribute("aria-expanded", "false");
  details.focus();
  await userEvent.keyboard("{Enter}");
  expect(details).toHaveAttribute("aria-expanded", "true");
  const panel = document.getElementById(details.getAttribute("aria-controls") ?? "") as HTMLElement;
  const changed = within(panel).getByRole("row", { name: /is_enabled/ });
  expect(changed).toHaveTextContent("false");
  expect(changed).toHaveTextContent("true");
  expect(within(panel).getByRole("row", { name: /^version/ })).toBeInTheDocument();
  // Only changed fields at first; unticking shows the rest.
  expect(within(panel).queryByRole("row", { name: /^flag_type/ })).not.toBeInTheDocument();
  await userEvent.click(within(panel).getByLabelText("Only changed fields"));
  expect(within(panel).getByRole("row", { name: /^flag_type/ })).toBeInTheDocument();
  expect(panel).toHaveTextContent("Actor kinduser");
  expect(panel).toHaveTextContent("Emailada@example.com");
  expect(panel).toHaveTextContent("IP address203.0.113.9");
  expect(panel).toHaveTextContent("User agentMozilla/5.0 (X11) Firefox/140.0");
  expect(panel).toHaveTextContent("Request IDreq-7f3a");
  expect(panel).toHaveTextContent("ab".repeat(32));

  await userEvent.click(within(tokenRow).getByRole("button", { name: "Details of entry 41" }));
  const tokenPanel = document.getElementById("audit-entry-41") as HTMLElement;
  expect(tokenPanel).toHaveTextContent("Token prefixsy_pat_9f2c");
  expect(tokenPanel).toHaveTextContent("curl/8.5");
  expect(tokenPanel).toHaveTextContent("not sealed yet");
  // A creation: nothing before, everything after.
  expect(within(tokenPanel).getByRole("row", { name: /^prefix/ })).toHaveTextContent("sk_live_ab12");

  expect(await accessibilityProblems()).toEqual([]);
});

test("an event has no diff", async () => {
  open("/audit", {
    "GET /api/audit": {
      items: [
        entry(7, {
          action: "auth.login_failed",
          actor: { kind: "anonymous", id: null, email: "eve@example.com", label: null },
          resource: { type: "auth", id: "eve@example.com", key: null, name: null },
          project_id: null,
          environment_id: null,
          before: null,
          after: null,
        }),
      ],
      next_cursor: null,
    },
  });
  const row = await screen.findByRole("row", { name: /auth\.login_failed/ });
  expect(row).toHaveTextContent("workspace");
  await userEvent.click(within(row).getByRole("button", { name: "Details of entry 7" }));
  expect(screen.getByText(/records an event: there is no before or after/)).toBeInTheDocument();
});

test("the filters go to the address and the request; Load more follows next_cursor", async () => {
  const { calls } = open("/audit", {
    "GET /api/audit": (c: Call) => {
      const q = query(c);
      if (q.cursor === "40") return { items: [entry(39), entry(38)], next_cursor: null };
      if (q.action) return { items: [entry(90)], next_cursor: null };
      return { items: [entry(42), entry(41), entry(40)], next_cursor: "40" };
    },
  });
  expect(await screen.findAllByRole("button", { name: /^Details of entry/ })).toHaveLength(3);
  expect(screen.getByText("3 entries, more to load")).toBeInTheDocument();
  await userEvent.click(screen.getByRole("button", { name: "Load more" }));
  await waitFor(() => expect(screen.getAllByRole("button", { name: /^Details of entry/ })).toHaveLength(5));
  expect(query(trailCalls(calls).at(-1))).toEqual({ cursor: "40" });
  expect(screen.queryByRole("button", { name: "Load more" })).not.toBeInTheDocument();
  expect(screen.getByText("5 entries")).toBeInTheDocument();

  const form = screen.getByRole("search", { name: "Filter the audit trail" });
  await userEvent.selectOptions(within(form).getByLabelText("Project"), "Storefront");
  await userEvent.selectOptions(within(form).getByLabelText("Environment"), "Staging");
  await userEvent.type(within(form).getByLabelText("Actor"), "ada@example.com");
  await userEvent.selectOptions(within(form).getByLabelText("Resource type"), "Flag");
  await userEvent.type(within(form).getByLabelText("Resource ID"), "checkout");
  // The server's pattern is checked first.
  await userEvent.type(within(form).getByLabelText("Action"), "flag updated");
  fireEvent.change(within(form).getByLabelText("From"), { target: { value: "2026-11-01T08:00:00" } });
  fireEvent.change(within(form).getByLabelText("To"), { target: { value: "2026-11-30T18:30:00" } });
  await userEvent.click(within(form).getByRole("button", { name: "Apply filters" }));
  expect(within(form).getByLabelText("Action")).toHaveAccessibleDescription(/flag\.updated, or flag\.\* for every action/);
  const before = trailCalls(calls).length;
  await userEvent.clear(within(form).getByLabelText("Action"));
  await userEvent.type(within(form).getByLabelText("Action"), "flag.*");
  await userEvent.click(within(form).getByRole("button", { name: "Apply filters" }));
  await screen.findByRole("button", { name: "Details of entry 90" });
  expect(trailCalls(calls).length).toBe(before + 1);
  const sent = query(trailCalls(calls).at(-1));
  expect(sent).toMatchObject({
    project_id: "p1",
    environment_id: "e2",
    actor: "ada@example.com",
    resource_type: "flag",
    resource_id: "checkout",
    action: "flag.*",
  });
  // Local times become RFC 3339 with the browser's offset.
  expect(sent.from).toMatch(/^2026-11-01T08:00:00([+-]\d\d:\d\d)$/);
  expect(Date.parse(sent.from ?? "")).toBe(new Date(2026, 10, 1, 8, 0, 0).getTime());
  expect(Date.parse(sent.to ?? "")).toBe(new Date(2026, 10, 30, 18, 30, 0).getTime());
  // The export downloads the same filters.
  const exportLink = screen.getByRole("link", { name: "Download NDJSON" });
  const href = new URL(exportLink.getAttribute("href") ?? "", "http://test");
  expect(href.pathname).toBe("/api/audit/export");
  expect(Object.fromEntries(href.searchParams)).toEqual({ ...sent });
  expect(exportLink).toHaveAttribute("download", "audit-trail.ndjson");
});

test("a time range kept from the address is sent exactly as written", async () => {
  const { calls } = open("/audit?from=2026-11-01T00:00:00Z&actor=sy_pat_9f2c", {
    "GET /api/audit": { items: [], next_cursor: null },
  });
  expect(await screen.findByText("Nothing matches these filters.")).toBeInTheDocument();
  await userEvent.click(screen.getByRole("button", { name: "Apply filters" }));
  await waitFor(() => expect(trailCalls(calls).length).toBeGreaterThan(0));
  expect(query(trailCalls(calls).at(-1))).toEqual({ actor: "sy_pat_9f2c", from: "2026-11-01T00:00:00Z" });
  expect(screen.getByRole("link", { name: "Clear filters" })).toHaveAttribute("href", "/audit");
});

test("workspace admins verify the chain and read ok, checked and the first bad id", async () => {
  let ok = true;
  const { calls } = open("/audit?from=2026-11-01T00:00:00Z", {
    "GET /api/audit": { items: [entry(42)], next_cursor: null },
    "GET /api/audit/verify": () => (ok ? { ok: true, checked: 42, first_bad_id: null } : { ok: false, checked: 17, first_bad_id: 17 }),
  });
  await userEvent.click(await screen.findByRole("button", { name: "Verify chain" }));
  await screen.findByText("The chain holds");
  expect(screen.getByText("Entries checked").nextElementSibling).toHaveTextContent("42");
  expect(screen.getByText("First bad entry").nextElementSibling).toHaveTextContent("none");
  // Over the same time range as the list.
  expect(query(calls.find((c) => c.path === "/api/audit/verify"))).toEqual({ from: "2026-11-01T00:00:00Z" });
  ok = false;
  await userEvent.click(screen.getByRole("button", { name: "Verify chain" }));
  const alert = await screen.findByRole("alert");
  expect(alert).toHaveTextContent("The chain is broken");
  expect(alert).toHaveTextContent("Entries checked17");
  expect(alert).toHaveTextContent("First bad entry#17");
});

test("project admins read their projects' entries and have no Verify chain", async () => {
  open("/audit", { "GET /api/audit": { items: [entry(42)], next_cursor: null } }, projectAdmin);
  await screen.findByRole("row", { name: /flag\.updated/ });
  expect(screen.getByText(/Every change to the projects you administer/)).toBeInTheDocument();
  expect(screen.queryByRole("button", { name: "Verify chain" })).not.toBeInTheDocument();
});

test("anyone else reads a permission problem", async () => {
  open("/audit", {
    "GET /api/audit": { status: 403, body: { error: "only workspace admins and project admins may read the audit trail" } },
  }, { ...projectAdmin, role: "viewer" });
  expect(await screen.findByRole("alert")).toHaveTextContent(
    "You do not have permission to read the audit trail. only workspace admins and project admins may read the audit trail",
  );
});

test("an environment filter lists only the chosen project's environments", async () => {
  open("/audit", { "GET /api/audit": { items: [], next_cursor: null }, "GET /api/projects": [project, { ...project, id: "p2", name: "Back office", environments: [{ ...project.environments[0]!, id: "e9", name: "Ops" }] }] });
  const env = await screen.findByLabelText("Environment");
  await screen.findByRole("option", { name: "Ops" });
  await userEvent.selectOptions(screen.getByLabelText("Project"), "Back office");
  expect(within(env).queryByRole("option", { name: "Staging" })).not.toBeInTheDocument();
  expect(within(env).getByRole("option", { name: "Ops" })).toBeInTheDocument();
});
