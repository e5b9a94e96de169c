import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen, type Call } from "../../test/render";
import Audit, { sourceLabel } from "./Audit";
import { flag, me, scopeRoutes } from "../../test/fixtures";

const reviewer = { ...me, role: "editor" as const };

const url = `/projects/p1/envs/e1/audit`;
const pattern = "/projects/:projectId/envs/:envId/audit";

function entry(id: number, over: Record<string, unknown> = {}) {
  return {
    id,
    environment_id: "e1",
    flag_key: "new-checkout",
    actor_email: "ann@example.com",
    action: "update",
    before_data: flag({ key: "new-checkout", is_enabled: false, rollout_percentage: 10, version: 3 }),
    after_data: flag({ key: "new-checkout", is_enabled: false, rollout_percentage: 40, version: 4 }),
    metadata: { source: "change_request", change_request_id: 7 },
    created_at: "2026-11-22T09:00:00Z",
    ...over,
  };
}

const auditCalls = (calls: Call[]) => calls.filter((c) => c.path === "/api/environments/e1/audit");

test("sourceLabel names change requests, schedules and promotions", () => {
  const names = (id: string) => (id === "e2" ? "Staging" : undefined);
  expect(sourceLabel({ source: "change_request", change_request_id: 7 }, names)).toBe("change request #7");
  expect(sourceLabel({ source: "schedule" }, names)).toBe("scheduled change");
  expect(sourceLabel({ source: "api", source_environment_id: "e2" }, names)).toBe("api (from Staging)");
  expect(sourceLabel(null, names)).toBe("—");
});

test("each entry shows who did what, and its diff opens from a keyboard-operable button", async () => {
  renderScreen(<Audit />, {
    url,
    pattern,
    routes: { ...scopeRoutes(reviewer), "GET /api/environments/e1/flags": [], "GET /api/environments/e1/audit": [entry(1)] },
  });
  const row = await screen.findByRole("row", { name: /new-checkout/ });
  expect(row).toHaveTextContent("ann@example.com");
  expect(row).toHaveTextContent("update");
  expect(row).toHaveTextContent("change request #7");
  expect(row).toHaveTextContent("rollout_percentage");
  const button = within(row).getByRole("button", { name: "Show diff" });
  expect(button).toHaveAttribute("aria-expanded", "false");
  button.focus();
  await userEvent.keyboard("{Enter}");
  expect(button).toHaveAttribute("aria-expanded", "true");
  const panel = document.getElementById(button.getAttribute("aria-controls") ?? "") as HTMLElement;
  const changed = within(panel).getByRole("row", { name: /rollout_percentage/ });
  expect(changed).toHaveTextContent("10");
  expect(changed).toHaveTextContent("40");
  // only changed fields by default; unticking shows the rest
  expect(within(panel).queryByRole("row", { name: /^flag_type/ })).not.toBeInTheDocument();
  await userEvent.click(within(panel).getByLabelText("Only changed fields"));
  expect(within(panel).getByRole("row", { name: /^flag_type/ })).toBeInTheDocument();
  await userEvent.click(button);
  expect(button).toHaveAttribute("aria-expanded", "false");
  expect(panel).not.toBeInTheDocument();
});

test("the flag filter and the pages are sent to the server", async () => {
  const full = Array.from({ length: 25 }, (_, i) => entry(100 - i));
  const { calls } = renderScreen(<Audit />, {
    url: url + "?limit=25",
    pattern,
    routes: {
      ...scopeRoutes(reviewer),
      "GET /api/environments/e1/flags": [flag({ key: "new-checkout", is_enabled: false })],
      "GET /api/environments/e1/audit": (c: Call) => (c.search.includes("offset=25") ? [entry(3)] : full),
    },
  });
  expect(await screen.findAllByRole("button", { name: "Show diff" })).toHaveLength(25);
  expect(new URLSearchParams(auditCalls(calls)[0]?.search).get("limit")).toBe("25");
  await userEvent.click(screen.getByRole("button", { name: "Older" }));
  await waitFor(() => expect(screen.getAllByRole("button", { name: "Show diff" })).toHaveLength(1));
  expect(new URLSearchParams(auditCalls(calls).at(-1)?.search).get("offset")).toBe("25");
  expect(screen.getByRole("button", { name: "Older" })).toBeDisabled();

  await userEvent.type(screen.getByLabelText("Flag key"), "old-banner");
  await userEvent.click(screen.getByRole("button", { name: "Apply" }));
  await waitFor(() => {
    const q = new URLSearchParams(auditCalls(calls).at(-1)?.search);
    expect(q.get("flag_key")).toBe("old-banner");
    expect(q.get("offset")).toBe("0");
  });
});

test("a 403 reads as a permission problem", async () => {
  renderScreen(<Audit />, {
    url,
    pattern,
    routes: {
      ...scopeRoutes(reviewer),
      "GET /api/environments/e1/flags": [],
      "GET /api/environments/e1/audit": { status: 403, body: { error: "not a member of this project" } },
    },
  });
  expect(await screen.findByRole("alert")).toHaveTextContent("You do not have permission to view the audit log");
});
