import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import FlagDiff from "./FlagDiff";
import { flag, scopeRoutes } from "../../test/fixtures";

const url = "/projects/p1/envs/e2/diff";
const pattern = "/projects/:projectId/envs/:envId/diff";

const entries = [
  { key: "a-same", status: "same", from: flag({ key: "a-same" }), to: flag({ key: "a-same", environment_id: "e1" }), changed_fields: [] },
  {
    key: "checkout",
    status: "different",
    from: flag({ rollout_percentage: 50, environment_id: "e2" }),
    to: flag({ rollout_percentage: 10 }),
    changed_fields: ["rollout_percentage"],
  },
  { key: "new-one", status: "only_in_from", from: flag({ key: "new-one", environment_id: "e2" }), to: null, changed_fields: [] },
  { key: "prod-only", status: "only_in_to", from: null, to: flag({ key: "prod-only" }), changed_fields: [] },
];

test("compares the current environment with the default one and hides identical flags", async () => {
  const { calls } = renderScreen(<FlagDiff />, {
    url,
    pattern,
    routes: { ...scopeRoutes(), "GET /api/projects/p1/flags/diff": entries },
  });
  expect(await screen.findByText(/1 different · 1 only in Staging · 1 only in Production · 1 identical/)).toBeInTheDocument();
  const diff = calls.find((c) => c.path === "/api/projects/p1/flags/diff");
  expect(new URLSearchParams(diff?.search).get("from")).toBe("e2");
  expect(new URLSearchParams(diff?.search).get("to")).toBe("e1");
  expect(screen.queryByRole("rowheader", { name: "a-same" })).not.toBeInTheDocument();
  await userEvent.click(screen.getByLabelText("Hide identical"));
  expect(screen.getByRole("rowheader", { name: "a-same" })).toBeInTheDocument();
  // only_in_to cannot be promoted from the source
  const prodOnly = screen.getByRole("rowheader", { name: "prod-only" }).closest("tr")!;
  expect(within(prodOnly).queryByRole("button", { name: /Promote/ })).not.toBeInTheDocument();
});

test("a different flag opens side by side with its changed field marked", async () => {
  renderScreen(<FlagDiff />, { url, pattern, routes: { ...scopeRoutes(), "GET /api/projects/p1/flags/diff": entries } });
  await userEvent.click(await screen.findByRole("button", { name: "Compare checkout" }));
  const header = screen.getByRole("rowheader", { name: /rollout_percentage/ });
  expect(header).toHaveTextContent("(changed)");
  const cells = within(header.closest("tr")!).getAllByRole("cell");
  expect(cells.map((c) => c.textContent)).toEqual(["50", "10"]);
  // fields the diff ignores are not shown
  expect(screen.queryByRole("rowheader", { name: /^version/ })).not.toBeInTheDocument();
});

test("promote confirms, then posts to the source with the target id", async () => {
  const { calls } = renderScreen(<FlagDiff />, {
    url,
    pattern,
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/flags/diff": entries,
      "POST /api/environments/e2/flags/checkout/promote": flag({ rollout_percentage: 50 }),
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Promote checkout to Production" }));
  expect(calls.some((c) => c.method === "POST")).toBe(false);
  const dialog = screen.getByRole("dialog", { name: "Promote checkout?" });
  expect(dialog).toHaveTextContent("rollout_percentage differs");
  await userEvent.click(within(dialog).getByRole("button", { name: "Promote to Production" }));
  expect(await screen.findByText(/Promoted/)).toHaveTextContent("Promoted checkout to Production");
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({ target_env_id: "e1" });
  await waitFor(() => expect(calls.filter((c) => c.path === "/api/projects/p1/flags/diff").length).toBe(2));
});

test("promoting into an approval environment explains the 409", async () => {
  renderScreen(<FlagDiff />, {
    url,
    pattern,
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/flags/diff": entries,
      "POST /api/environments/e2/flags/new-one/promote": { status: 409, body: { error: "environment requires approval" } },
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Promote new-one to Production" }));
  await userEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Promote to Production" }));
  expect(await screen.findByRole("alert")).toHaveTextContent("Production requires approval");
});
