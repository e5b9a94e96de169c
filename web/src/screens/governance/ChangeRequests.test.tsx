import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen, type Call } from "../../test/render";
import ChangeRequests from "./ChangeRequests";
import { flag, me, scopeRoutes } from "../../test/fixtures";

const reviewer = { ...me, role: "editor" as const };

const url = `/projects/p1/envs/e1/change-requests`;
const pattern = "/projects/:projectId/envs/:envId/change-requests";

const cr = {
  id: 7,
  environment_id: "e1",
  flag_key: "new-checkout",
  patch: { is_enabled: true, rollout_percentage: 25 },
  requested_by: "author@example.com",
  status: "pending",
  reviewed_by: null,
  reason: null,
  created_at: "2026-11-22T09:00:00Z",
  reviewed_at: null,
};

function routes(extra: Record<string, unknown> = {}) {
  return {
    ...scopeRoutes(reviewer),
    "GET /api/environments/e1/change-requests": [cr],
    "GET /api/environments/e1/flags": [flag({ key: "new-checkout", is_enabled: false, rollout_percentage: 10 })],
    ...extra,
  };
}

const gets = (calls: Call[], path: string) => calls.filter((c) => c.method === "GET" && c.path === path).length;

test("lists pending requests with the requested change against the current flag", async () => {
  const { calls } = renderScreen(<ChangeRequests />, { url, pattern, routes: routes() });
  const item = await screen.findByRole("listitem", { name: /new-checkout/ });
  expect(calls.find((c) => c.path.endsWith("/change-requests"))?.search).toBe("?status=pending");
  expect(within(item).getByText(/author@example.com/)).toBeInTheDocument();
  expect(within(item).getByText("Turn on, rollout 25%")).toBeInTheDocument();
  // current (left) vs requested (right) for the patched field
  const row = await within(item).findByRole("row", { name: /rollout_percentage/ });
  expect(row).toHaveTextContent("10");
  expect(row).toHaveTextContent("25");
  expect(within(item).getByRole("button", { name: "Approve" })).toBeEnabled();
  expect(within(item).getByRole("button", { name: "Reject" })).toBeEnabled();
});

test("the status filter asks the server for that status, and 'all' for every status", async () => {
  const { calls } = renderScreen(<ChangeRequests />, { url, pattern, routes: routes() });
  await screen.findByRole("listitem", { name: /new-checkout/ });
  await userEvent.selectOptions(screen.getByLabelText("Status"), "rejected");
  await waitFor(() => expect(calls.some((c) => c.search === "?status=rejected")).toBe(true));
  await userEvent.selectOptions(screen.getByLabelText("Status"), "all");
  await waitFor(() => expect(calls.filter((c) => c.path.endsWith("/change-requests")).at(-1)?.search).toBe(""));
});

test("approving by the requester shows the server's 403 as a permission message", async () => {
  renderScreen(<ChangeRequests />, {
    url,
    pattern,
    routes: routes({
      "POST /api/environments/e1/change-requests/7/approve": { status: 403, body: { error: "the requester cannot approve their own change" } },
    }),
  });
  const item = await screen.findByRole("listitem", { name: /new-checkout/ });
  await userEvent.click(within(item).getByRole("button", { name: "Approve" }));
  const alert = await within(item).findByRole("alert");
  expect(alert).toHaveTextContent("You do not have permission to approve this change request.");
  expect(alert).toHaveTextContent("the requester cannot approve their own change");
});

test("approving refreshes the queue and the flag list", async () => {
  const { calls } = renderScreen(<ChangeRequests />, {
    url,
    pattern,
    routes: routes({
      "POST /api/environments/e1/change-requests/7/approve": flag({ key: "new-checkout", is_enabled: true, version: 4 }),
    }),
  });
  const item = await screen.findByRole("listitem", { name: /new-checkout/ });
  await waitFor(() => expect(gets(calls, "/api/environments/e1/flags")).toBe(1));
  await userEvent.click(within(item).getByRole("button", { name: "Approve" }));
  expect(await screen.findByText(/Approved change request #7: new-checkout is now at version 4/)).toBeInTheDocument();
  await waitFor(() => expect(gets(calls, "/api/environments/e1/change-requests")).toBe(2));
  await waitFor(() => expect(gets(calls, "/api/environments/e1/flags")).toBe(2));
  expect(calls.find((c) => c.method === "POST")?.headers.get("X-Service-Request")).toBe("true");
});

test("rejecting requires a reason and sends it", async () => {
  const { calls } = renderScreen(<ChangeRequests />, {
    url,
    pattern,
    routes: routes({ "POST /api/environments/e1/change-requests/7/reject": { status: 204 } }),
  });
  const item = await screen.findByRole("listitem", { name: /new-checkout/ });
  await userEvent.click(within(item).getByRole("button", { name: "Reject" }));
  const dialog = screen.getByRole("dialog", { name: "Reject change request #7" });
  await userEvent.click(within(dialog).getByRole("button", { name: "Reject request" }));
  expect(within(dialog).getByText("Give the requester a reason.")).toBeInTheDocument();
  expect(calls.some((c) => c.method === "POST")).toBe(false);
  await userEvent.type(within(dialog).getByLabelText("Reason"), "Rollout too wide for Friday");
  await userEvent.click(within(dialog).getByRole("button", { name: "Reject request" }));
  await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
  const post = calls.find((c) => c.path === "/api/environments/e1/change-requests/7/reject");
  expect(post?.body).toEqual({ reason: "Rollout too wide for Friday" });
  expect(await screen.findByText("Rejected change request #7 for new-checkout.")).toBeInTheDocument();
});

test("the requester can cancel after confirming", async () => {
  const { calls } = renderScreen(<ChangeRequests />, {
    url,
    pattern,
    routes: routes({
      "GET /api/auth/me": { id: 2, email: "author@example.com", name: "A", role: "editor", workspace_name: "Acme", is_setup_complete: true },
      "DELETE /api/environments/e1/change-requests/7": { status: 204 },
    }),
  });
  const item = await screen.findByRole("listitem", { name: /new-checkout/ });
  await userEvent.click(await within(item).findByRole("button", { name: "Cancel request" }));
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);
  const dialog = screen.getByRole("dialog");
  await userEvent.click(within(dialog).getByRole("button", { name: "Cancel request" }));
  await waitFor(() => expect(calls.some((c) => c.method === "DELETE" && c.path.endsWith("/change-requests/7"))).toBe(true));
});
