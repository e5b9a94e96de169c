import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter, Route, Routes as RouterRoutes } from "react-router";
import { newApi } from "../../api/client";
import { ApiProvider } from "../../api/context";
import { fakeFetch, renderScreen, type Call, type Routes } from "../../test/render";
import { flagKeys } from "../../lib/stream";
import FlagEditor from "./FlagEditor";
import { flag, scopeRoutes } from "../../test/fixtures";

const editUrl = "/projects/p1/envs/e1/flags/checkout";
const editPattern = "/projects/:projectId/envs/:envId/flags/:key";
const segments = [
  { id: "s1", environment_id: "e1", name: "Beta users", key: "beta", description: null, rules: [], created_at: "2026-11-01T00:00:00Z" },
];

function edit(current: ReturnType<typeof flag>, routes: Routes = {}) {
  return renderScreen(<FlagEditor />, {
    url: editUrl,
    pattern: editPattern,
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": [current, flag({ key: "auth" })],
      "GET /api/environments/e1/flags/checkout": current,
      "GET /api/environments/e1/segments": segments,
      "GET /api/environments/e1/flag-status": [],
      ...routes,
    },
  });
}

test("creating a flag posts the whole flag with its rule", async () => {
  const { calls } = renderScreen(<FlagEditor />, {
    url: "/projects/p1/envs/e1/flags/new",
    pattern: "/projects/:projectId/envs/:envId/flags/new",
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": [],
      "GET /api/environments/e1/segments": segments,
      "POST /api/environments/e1/flags": (c: Call) => ({ ...flag(), ...(c.body as object), version: 1 }),
    },
  });
  await userEvent.type(await screen.findByLabelText("Key"), "new-checkout");
  await userEvent.type(screen.getByLabelText("Description"), "The new checkout");
  await userEvent.click(screen.getByRole("button", { name: "Add rule" }));
  await userEvent.type(screen.getByLabelText("Rule 1 condition 1 Attribute"), "country");
  await userEvent.selectOptions(screen.getByLabelText("Rule 1 condition 1 Operator"), "starts_with");
  await userEvent.type(screen.getByLabelText("Rule 1 condition 1 Values"), "N{Enter}B");
  await userEvent.click(screen.getByRole("button", { name: "Add tag" }).previousElementSibling as HTMLElement);
  await userEvent.keyboard("web{Enter}");
  await userEvent.click(screen.getByRole("button", { name: "Create flag" }));
  await waitFor(() => expect(screen.getByTestId("navigated")).toBeInTheDocument());
  const post = calls.find((c) => c.method === "POST");
  expect(post?.body).toMatchObject({
    key: "new-checkout",
    description: "The new checkout",
    is_enabled: false,
    flag_type: "boolean",
    rollout_percentage: null,
    rules: [{ attribute: "country", operator: "starts_with", values: ["N", "B"] }],
    tags: ["web"],
  });
});

test("client validation blocks saving and names the fields", async () => {
  const { calls } = renderScreen(<FlagEditor />, {
    url: "/projects/p1/envs/e1/flags/new",
    pattern: "/projects/:projectId/envs/:envId/flags/new",
    routes: { ...scopeRoutes(), "GET /api/environments/e1/flags": [], "GET /api/environments/e1/segments": segments },
  });
  await userEvent.type(await screen.findByLabelText("Key"), "has space");
  await userEvent.click(screen.getByRole("button", { name: "Add rule" }));
  await userEvent.click(screen.getByRole("button", { name: "Create flag" }));
  expect(screen.getByLabelText("Key")).toHaveAccessibleDescription(/ASCII letters/);
  expect(screen.getByLabelText("Rule 1 condition 1 Attribute")).toHaveAccessibleDescription("is required");
  expect(calls.some((c) => c.method === "POST")).toBe(false);
});

test("saving an edit sends only the changed fields and stays with a notice", async () => {
  const current = flag({ rollout_percentage: 50 });
  const { calls } = edit(current, {
    "PATCH /api/environments/e1/flags/checkout": (c: Call) => ({ ...current, ...(c.body as object), version: 4 }),
  });
  const slider = await screen.findByLabelText("Rollout percentage");
  fireEvent.change(slider, { target: { value: "80" } });
  expect(screen.getByText("80%")).toBeInTheDocument();
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  expect(await screen.findByText("Saved — version 4.")).toBeInTheDocument();
  expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ rollout_percentage: 80 });
});

test("Move up reorders rules in the patch", async () => {
  const current = flag({
    rules: [
      { attribute: "country", operator: "equals", values: ["NL"] },
      { segment_key: "beta" },
    ],
  });
  const { calls } = edit(current, { "PATCH /api/environments/e1/flags/checkout": current });
  await userEvent.click(await screen.findByRole("button", { name: "Move rule 2 up" }));
  expect(screen.getByLabelText("Rule 1 Segment")).toHaveValue("beta");
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  await waitFor(() => expect(calls.some((c) => c.method === "PATCH")).toBe(true));
  expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({
    rules: [{ segment_key: "beta" }, { attribute: "country", operator: "equals", values: ["NL"] }],
  });
});

test("a 422 detail appears next to the rule field it names", async () => {
  const current = flag({
    rules: [
      { attribute: "country", operator: "equals", values: ["NL"] },
      { attribute: "plan", operator: "equals", values: ["pro"] },
    ],
  });
  edit(current, {
    "PATCH /api/environments/e1/flags/checkout": {
      status: 422,
      body: { error: "rules.1.values: bad", details: [{ field: "rules[1].values", message: "must not contain that value" }] },
    },
  });
  await userEvent.type(await screen.findByLabelText("Description"), "!");
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  await waitFor(() =>
    expect(screen.getByLabelText("Rule 2 condition 1 Values")).toHaveAccessibleDescription(/must not contain that value/),
  );
  expect(screen.getByLabelText("Rule 1 condition 1 Values")).not.toHaveAccessibleDescription(/must not contain/);
});

test("variant weights show their shares and a zero sum blocks saving", async () => {
  const current = flag({ flag_type: "string", default_value: "a", disabled_value: "off" });
  const { calls } = edit(current, { "PATCH /api/environments/e1/flags/checkout": current });
  await userEvent.click(await screen.findByRole("button", { name: "Add variant" }));
  await userEvent.click(screen.getByRole("button", { name: "Add variant" }));
  await userEvent.type(screen.getByLabelText("Variant 1 value"), "blue");
  await userEvent.type(screen.getByLabelText("Variant 1 weight"), "60");
  await userEvent.type(screen.getByLabelText("Variant 2 value"), "green");
  await userEvent.type(screen.getByLabelText("Variant 2 weight"), "30");
  expect(screen.getByTestId("weight-sum")).toHaveTextContent("sum 90 ✓");
  expect(screen.getByText("66.7%")).toBeInTheDocument();
  await userEvent.clear(screen.getByLabelText("Variant 1 weight"));
  await userEvent.type(screen.getByLabelText("Variant 1 weight"), "70");
  expect(screen.getByTestId("weight-sum")).toHaveTextContent("sum 100% ✓");
  await userEvent.clear(screen.getByLabelText("Variant 1 weight"));
  await userEvent.type(screen.getByLabelText("Variant 1 weight"), "0");
  await userEvent.clear(screen.getByLabelText("Variant 2 weight"));
  await userEvent.type(screen.getByLabelText("Variant 2 weight"), "0");
  expect(screen.getByTestId("weight-sum")).toHaveTextContent("sum 0 ✗");
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  expect(calls.some((c) => c.method === "PATCH")).toBe(false);
});

test("saving in an approval environment shows the change request", async () => {
  const current = flag();
  edit(current, {
    "PATCH /api/environments/e1/flags/checkout": {
      status: 202,
      body: {
        id: 9,
        environment_id: "e1",
        flag_key: "checkout",
        patch: { is_enabled: false },
        requested_by: "a@example.com",
        status: "pending",
        reviewed_by: null,
        reason: null,
        created_at: "2026-11-22T00:00:00Z",
        reviewed_at: null,
      },
    },
  });
  await userEvent.click(await screen.findByRole("switch", { name: "Enabled" }));
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  const notice = await screen.findByText(/Change request #9/);
  expect(notice).toHaveTextContent("waiting for approval");
  expect(within(notice).getByRole("link")).toHaveAttribute("href", "/projects/p1/envs/e1/change-requests");
});

test("a server update replaces a clean form but not a dirty one", async () => {
  let current = flag({ description: "v3" });
  const { queryClient } = edit(current, { "GET /api/environments/e1/flags/checkout": () => current });
  expect(await screen.findByLabelText("Description")).toHaveValue("v3");
  current = flag({ description: "v4", version: 4 });
  await queryClient.invalidateQueries({ queryKey: flagKeys.one("e1", "checkout") });
  await waitFor(() => expect(screen.getByLabelText("Description")).toHaveValue("v4"));
  await userEvent.type(screen.getByLabelText("Description"), " mine");
  current = flag({ description: "v5", version: 5 });
  await queryClient.invalidateQueries({ queryKey: flagKeys.one("e1", "checkout") });
  expect(await screen.findByText(/now version 5/)).toBeInTheDocument();
  expect(screen.getByLabelText("Description")).toHaveValue("v4 mine");
});

test("delete asks first, then deletes", async () => {
  const { calls } = edit(flag(), { "DELETE /api/environments/e1/flags/checkout": { status: 204 } });
  await userEvent.click(await screen.findByRole("button", { name: "Delete" }));
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);
  const dialog = screen.getByRole("dialog", { name: "Delete checkout?" });
  await userEvent.click(within(dialog).getByRole("button", { name: "Delete flag" }));
  await waitFor(() => expect(screen.getByTestId("navigated")).toBeInTheDocument());
  expect(calls.some((c) => c.method === "DELETE" && c.path === "/api/environments/e1/flags/checkout")).toBe(true);
});

test("dragging a rule onto another reorders, and prerequisites are sent with their required value", async () => {
  const current = flag({
    rules: [
      { attribute: "a", operator: "equals", values: ["1"] },
      { attribute: "b", operator: "equals", values: ["2"] },
      { attribute: "c", operator: "equals", values: ["3"] },
    ],
  });
  const { calls } = edit(current, { "PATCH /api/environments/e1/flags/checkout": current });
  await screen.findByLabelText("Rule 3 condition 1 Attribute");
  const handles = document.querySelectorAll(".drag-handle");
  const items = screen.getAllByRole("listitem");
  fireEvent.dragStart(handles[2]!);
  fireEvent.dragOver(items[0]!);
  fireEvent.drop(items[0]!);
  expect(screen.getByLabelText("Rule 1 condition 1 Attribute")).toHaveValue("c");
  await userEvent.click(screen.getByRole("button", { name: "Add prerequisite" }));
  await userEvent.selectOptions(screen.getByLabelText("Prerequisite 1 flag"), "auth");
  await userEvent.type(screen.getByLabelText("Prerequisite 1 required value"), "true");
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  await waitFor(() => expect(calls.some((c) => c.method === "PATCH")).toBe(true));
  const body = calls.find((c) => c.method === "PATCH")?.body as { rules: { attribute: string }[]; prerequisites: unknown };
  expect(body.rules.map((r) => r.attribute)).toEqual(["c", "a", "b"]);
  expect(body.prerequisites).toEqual([{ flag_key: "auth", required_value: true }]);
});

test("archive keeps unsaved edits and flips to Unarchive", async () => {
  const current = flag();
  const { calls } = edit(current, {
    "POST /api/environments/e1/flags/checkout/archive": { ...current, archived_at: "2026-11-22T00:00:00Z", version: 4 },
  });
  await userEvent.type(await screen.findByLabelText("Description"), " edited");
  await userEvent.click(screen.getByRole("button", { name: "Archive" }));
  expect(await screen.findByText("Flag archived.")).toBeInTheDocument();
  expect(screen.getByRole("button", { name: "Unarchive" })).toBeInTheDocument();
  expect(screen.getByLabelText("Description")).toHaveValue("New checkout edited");
  expect(screen.queryByText(/Someone changed this flag/)).not.toBeInTheDocument();
  expect(calls.some((c) => c.method === "POST" && c.path.endsWith("/archive"))).toBe(true);
});

test("403 on save reads as a permission problem", async () => {
  edit(flag(), { "PATCH /api/environments/e1/flags/checkout": { status: 403, body: { error: "insufficient role" } } });
  await userEvent.type(await screen.findByLabelText("Description"), "!");
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  expect(await screen.findByText(/You do not have permission to change flags/)).toBeInTheDocument();
});

test("the Save bar is pinned to the window only while there are unsaved edits", async () => {
  const current = flag();
  edit(current, { "PATCH /api/environments/e1/flags/checkout": (c: Call) => ({ ...current, ...(c.body as object), version: 4 }) });
  const bar = () => screen.getByRole("button", { name: "Save flag" }).parentElement as HTMLElement;
  await screen.findByDisplayValue(current.description ?? "");
  expect(bar()).not.toHaveClass("editor-footer-pinned");
  await userEvent.type(screen.getByLabelText("Description"), " and more");
  expect(bar()).toHaveClass("editor-footer", "editor-footer-pinned");
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  await screen.findByText("Saved — version 4.");
  expect(bar()).not.toHaveClass("editor-footer-pinned");
});

test("the Client-side switch is off by default, explains itself, and saves as client_side", async () => {
  const current = flag();
  const { calls } = edit(current, {
    "PATCH /api/environments/e1/flags/checkout": (c: Call) => ({ ...current, ...(c.body as object), version: 4 }),
  });
  const sw = await screen.findByRole("switch", { name: "Client-side" });
  expect(sw).toHaveAttribute("aria-checked", "false");
  expect(sw).toHaveAccessibleDescription(/client keys \(browsers, mobile apps\) cannot see it/);
  await userEvent.click(sw);
  expect(sw).toHaveAttribute("aria-checked", "true");
  expect(sw).toHaveAccessibleDescription(/browsers and apps with a client key \(pk_live_…\) can evaluate it/);
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  await screen.findByText(/Saved — version 4/);
  expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ client_side: true });
  expect(screen.getByRole("switch", { name: "Client-side" })).toHaveAttribute("aria-checked", "true");
});

test("a new flag is created server-only unless switched", async () => {
  const { calls } = renderScreen(<FlagEditor />, {
    url: "/projects/p1/envs/e1/flags/new",
    pattern: "/projects/:projectId/envs/:envId/flags/new",
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": [],
      "GET /api/environments/e1/segments": segments,
      "POST /api/environments/e1/flags": (c: Call) => ({ ...flag(), ...(c.body as object), version: 1 }),
    },
  });
  await userEvent.type(await screen.findByLabelText("Key"), "banner");
  expect(screen.getByRole("switch", { name: "Client-side" })).toHaveAttribute("aria-checked", "false");
  await userEvent.click(screen.getByRole("button", { name: "Create flag" }));
  await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
  expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({ key: "banner", client_side: false });
});

test("after Create flag the editor, now at the flag's own address, says the flag was created", async () => {
  // As in App.tsx: flags/new and flags/:key are two routes with the same
  // element, so the router keeps this editor mounted across the redirect.
  const calls: Call[] = [];
  const routes: Routes = {
    ...scopeRoutes(),
    "GET /api/environments/e1/flags": [],
    "GET /api/environments/e1/segments": segments,
    "GET /api/environments/e1/flag-status": [],
    "POST /api/environments/e1/flags": (c: Call) => ({ ...flag(), ...(c.body as object), version: 1 }),
    "GET /api/environments/e1/flags/new-checkout": flag({ key: "new-checkout", version: 1 }),
  };
  const api = newApi({ baseUrl: "http://test", fetch: fakeFetch(routes, calls) });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <ApiProvider api={api}>
      <QueryClientProvider client={queryClient}>
        <MemoryRouter initialEntries={["/projects/p1/envs/e1/flags/new"]}>
          <RouterRoutes>
            <Route path="/projects/:projectId/envs/:envId/flags/new" element={<FlagEditor />} />
            <Route path="/projects/:projectId/envs/:envId/flags/:key" element={<FlagEditor />} />
          </RouterRoutes>
        </MemoryRouter>
      </QueryClientProvider>
    </ApiProvider>,
  );
  await userEvent.type(await screen.findByLabelText("Key"), "new-checkout");
  await userEvent.click(screen.getByRole("button", { name: "Create flag" }));
  expect(await screen.findByRole("button", { name: "Save flag" })).toBeInTheDocument();
  await waitFor(() => expect(screen.getByRole("heading", { level: 1 })).toHaveTextContent("new-checkout"));
  expect(screen.getByText("Flag new-checkout created.")).toHaveAttribute("role", "status");
  expect(calls.filter((c) => c.method === "POST")).toHaveLength(1);
});

describe("the Last 7 days panel", () => {
  const status = (over: object) => ({
    flag_key: "checkout",
    status: "active",
    last_evaluated_at: new Date(Date.now() - 3 * 3600_000).toISOString(),
    evaluations_7d: 0,
    values_7d: [],
    ...over,
  });
  const panel = async () => {
    const heading = await screen.findByRole("heading", { name: "Last 7 days" });
    return heading.closest("section")!;
  };

  test("reads the environment's status and shows the count and each value's share", async () => {
    const { calls } = edit(flag(), {
      "GET /api/environments/e1/flag-status": [
        status({ flag_key: "auth", evaluations_7d: 5, values_7d: [{ value: "true", count: 5 }] }),
        status({
          evaluations_7d: 1500,
          values_7d: [
            { value: "false", count: 500 },
            { value: "true", count: 1000 },
          ],
        }),
      ],
    });
    const section = await panel();
    await waitFor(() => expect(section).toHaveTextContent("1,500 evaluations"));
    expect(calls.some((c) => c.method === "GET" && c.path === "/api/environments/e1/flag-status")).toBe(true);
    expect(within(section).getByTitle(/more than one value/)).toHaveTextContent(/^Active/);
    expect(section).toHaveTextContent("last evaluated 3 hours ago");
    const bars = within(within(section).getByRole("list", { name: "Evaluations by value, last 7 days" })).getAllByRole("listitem");
    // Most evaluated first.
    expect(bars.map((b) => b.textContent)).toEqual(["true1,000 (66.7%)", "false500 (33.3%)"]);
    expect(bars[0]!.querySelector<HTMLElement>(".value-bar-fill")?.style.width).toMatch(/^66\.66/);
    expect(section).not.toHaveTextContent(/removed from code/);
  });

  test("a launched flag says it can be removed from code, serving its one value", async () => {
    edit(flag(), {
      "GET /api/environments/e1/flag-status": [
        status({ status: "launched", evaluations_7d: 42, values_7d: [{ value: "true", count: 42 }] }),
      ],
    });
    const section = await panel();
    const note = await within(section).findByText(/Ready to remove from code/);
    expect(note.closest("p")).toHaveTextContent(
      "Every evaluation in the last 7 days returned true and the flag hasn't changed for 7 days: it can be removed from code, serving true.",
    );
    expect(within(section).getAllByRole("listitem").map((b) => b.textContent)).toEqual(["true42 (100%)"]);
    expect(within(section).getByTitle(/can be removed from code/)).toHaveTextContent(/^Launched/);
  });

  test("an inactive flag was not evaluated in the last 7 days", async () => {
    edit(flag(), {
      "GET /api/environments/e1/flag-status": [status({ status: "inactive", last_evaluated_at: "2020-01-01T00:00:00Z" })],
    });
    const section = await panel();
    await waitFor(() => expect(section).toHaveTextContent("0 evaluations"));
    expect(section).toHaveTextContent("Not evaluated in the last 7 days (last evaluation");
    expect(within(section).queryByRole("list")).not.toBeInTheDocument();
  });

  test("a new flag is not evaluated yet", async () => {
    edit(flag(), { "GET /api/environments/e1/flag-status": [status({ status: "new", last_evaluated_at: null })] });
    const section = await panel();
    await waitFor(() => expect(section).toHaveTextContent("Not evaluated yet."));
    expect(section).toHaveTextContent("last evaluated Never");
  });

  test("a failed status read leaves the editor working and says so in the panel", async () => {
    const { calls } = edit(flag({ rollout_percentage: 50 }), {
      "GET /api/environments/e1/flag-status": { status: 403, body: { error: "insufficient role" } },
      "PATCH /api/environments/e1/flags/checkout": (c: Call) => ({ ...flag(), ...(c.body as object), version: 4 }),
    });
    const section = await panel();
    await waitFor(() => expect(section).toHaveTextContent("Evaluations could not be loaded (insufficient role)."));
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    fireEvent.change(screen.getByLabelText("Rollout percentage"), { target: { value: "80" } });
    await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
    expect(await screen.findByText("Saved — version 4.")).toBeInTheDocument();
    expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ rollout_percentage: 80 });
  });

  test("a new flag's form has no panel", async () => {
    renderScreen(<FlagEditor />, {
      url: "/projects/p1/envs/e1/flags/new",
      pattern: "/projects/:projectId/envs/:envId/flags/new",
      routes: { ...scopeRoutes(), "GET /api/environments/e1/flags": [], "GET /api/environments/e1/segments": segments },
    });
    await screen.findByLabelText("Key");
    expect(screen.queryByRole("heading", { name: "Last 7 days" })).not.toBeInTheDocument();
  });
});
