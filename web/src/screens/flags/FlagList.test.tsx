import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import { flagKeys } from "../../lib/stream";
import FlagList from "./FlagList";
import { FlagListEmpty, flagsFile } from "./FlagListEmpty";
import { accessibilityProblems } from "../../test/axe";
import { flag, project, scopeRoutes } from "../../test/fixtures";

const url = "/projects/p1/envs/e1/flags";
const pattern = "/projects/:projectId/envs/:envId/flags";

const flags = [
  flag({ key: "checkout", is_enabled: false, tags: ["web"], rollout_percentage: 25, rules: [{ segment_key: "beta" }] }),
  flag({ key: "dark-mode", description: "Dark theme", tags: ["ui"] }),
  flag({ key: "old-banner", archived_at: "2026-11-10T00:00:00Z" }),
];

test("toggling sends a merge patch with is_enabled and shows the new state", async () => {
  const { calls } = renderScreen(<FlagList />, {
    url,
    pattern,
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": flags,
      "PATCH /api/environments/e1/flags/checkout": { ...flags[0], is_enabled: true, version: 4 },
    },
  });
  const sw = await screen.findByRole("switch", { name: "Enable checkout" });
  expect(sw).toHaveAttribute("aria-checked", "false");
  await userEvent.click(sw);
  await waitFor(() => expect(screen.getByRole("switch", { name: "Enable checkout" })).toHaveAttribute("aria-checked", "true"));
  const patch = calls.find((c) => c.method === "PATCH");
  expect(patch?.body).toEqual({ is_enabled: true });
  expect(patch?.headers.get("Content-Type")).toBe("application/merge-patch+json");
});

test("a 202 shows the change request and leaves the flag untoggled", async () => {
  renderScreen(<FlagList />, {
    url,
    pattern,
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": flags,
      "PATCH /api/environments/e1/flags/checkout": {
        status: 202,
        body: {
          id: 17,
          environment_id: "e1",
          flag_key: "checkout",
          patch: { is_enabled: true },
          requested_by: "a@example.com",
          status: "pending",
          reviewed_by: null,
          reason: null,
          created_at: "2026-11-22T00:00:00Z",
          reviewed_at: null,
        },
      },
    },
  });
  await userEvent.click(await screen.findByRole("switch", { name: "Enable checkout" }));
  const notice = await screen.findByText(/Change request #17/);
  expect(notice).toHaveTextContent("waiting for approval");
  expect(within(notice).getByRole("link", { name: /change requests/i })).toHaveAttribute("href", "/projects/p1/envs/e1/change-requests");
  expect(screen.getByRole("switch", { name: "Enable checkout" })).toHaveAttribute("aria-checked", "false");
});

test("search, tag and archived filters narrow the table", async () => {
  renderScreen(<FlagList />, { url, pattern, routes: { ...scopeRoutes(), "GET /api/environments/e1/flags": flags } });
  await screen.findByRole("link", { name: "checkout" });
  expect(screen.queryByRole("link", { name: "old-banner" })).not.toBeInTheDocument();
  await userEvent.click(screen.getByLabelText(/Show archived/));
  expect(screen.getByRole("link", { name: "old-banner" })).toBeInTheDocument();
  await userEvent.selectOptions(screen.getByLabelText("Tag"), "ui");
  expect(screen.getByRole("link", { name: "dark-mode" })).toBeInTheDocument();
  expect(screen.queryByRole("link", { name: "checkout" })).not.toBeInTheDocument();
  await userEvent.selectOptions(screen.getByLabelText("Tag"), "");
  await userEvent.type(screen.getByLabelText("Search"), "theme");
  expect(screen.getAllByRole("row")).toHaveLength(2); // header + dark-mode
  expect(screen.getByRole("link", { name: "New flag" })).toHaveAttribute("href", "/projects/p1/envs/e1/flags/new");
});

test("the rollout summary shows percentage and rules", async () => {
  renderScreen(<FlagList />, { url, pattern, routes: { ...scopeRoutes(), "GET /api/environments/e1/flags": flags } });
  const row = (await screen.findByRole("link", { name: "checkout" })).closest("tr")!;
  expect(row).toHaveTextContent("25% rollout");
  expect(row).toHaveTextContent("1 rule (1 segment)");
  expect(row).toHaveTextContent("off serves false");
});

test("the list refetches when the stream invalidates its key", async () => {
  let version = 0;
  const { queryClient } = renderScreen(<FlagList />, {
    url,
    pattern,
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": () => (version++ === 0 ? flags : [...flags, flag({ key: "fresh" })]),
    },
  });
  await screen.findByRole("link", { name: "checkout" });
  await queryClient.invalidateQueries({ queryKey: flagKeys.list("e1"), exact: true });
  expect(await screen.findByRole("link", { name: "fresh" })).toBeInTheDocument();
});

test("403 reads as a permission problem", async () => {
  renderScreen(<FlagList />, {
    url,
    pattern,
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": flags,
      "PATCH /api/environments/e1/flags/checkout": { status: 403, body: { error: "insufficient role" } },
    },
  });
  await userEvent.click(await screen.findByRole("switch", { name: "Enable checkout" }));
  expect(await screen.findByRole("alert")).toHaveTextContent("You do not have permission to change flags");
});

test("an environment that requires approval says so before any write", async () => {
  renderScreen(<FlagList />, {
    url: "/projects/p1/envs/e2/flags",
    pattern,
    routes: { ...scopeRoutes(), "GET /api/environments/e2/flags": flags },
  });
  expect(await screen.findByText(/Staging requires approval/)).toBeInTheDocument();
});

test("no approval notice where none is required", async () => {
  renderScreen(<FlagList />, { url, pattern, routes: { ...scopeRoutes(), "GET /api/environments/e1/flags": flags } });
  await screen.findByRole("switch", { name: "Enable checkout" });
  expect(screen.queryByText(/requires approval/)).not.toBeInTheDocument();
});

test("client-side flags carry a badge, the filter keeps only them, and a live update moves the badge", async () => {
  let served = [flag({ key: "checkout", client_side: true }), flag({ key: "dark-mode" })];
  const { queryClient } = renderScreen(<FlagList />, {
    url: `${url}?client_side=1`,
    pattern,
    routes: { ...scopeRoutes(), "GET /api/environments/e1/flags": () => served },
  });
  const row = (await screen.findByRole("link", { name: "checkout" })).closest("tr")!;
  expect(within(row).getByText("client-side")).toBeInTheDocument();
  expect(screen.getByLabelText(/Client-side only/)).toBeChecked(); // from ?client_side=1 (the SDK keys screen's link)
  expect(screen.queryByRole("link", { name: "dark-mode" })).not.toBeInTheDocument();
  await userEvent.click(screen.getByLabelText(/Client-side only/));
  const dark = (await screen.findByRole("link", { name: "dark-mode" })).closest("tr")!;
  expect(within(dark).queryByText("client-side")).not.toBeInTheDocument();

  // Someone marks dark-mode client-side elsewhere: the stream's invalidation refetches the list.
  served = [flag({ key: "checkout", client_side: true }), flag({ key: "dark-mode", client_side: true })];
  await queryClient.invalidateQueries({ queryKey: flagKeys.list("e1"), exact: true });
  await waitFor(() =>
    expect(within(screen.getByRole("link", { name: "dark-mode" }).closest("tr")!).getByText("client-side")).toBeInTheDocument(),
  );
});

test("the client-side filter on an environment without one says why a browser sees nothing", async () => {
  renderScreen(<FlagList />, {
    url: `${url}?client_side=1`,
    pattern,
    routes: { ...scopeRoutes(), "GET /api/environments/e1/flags": flags },
  });
  expect(await screen.findByText(/No flag of this environment is client-side yet/)).toBeInTheDocument();
});

describe("flag status", () => {
  const now = Date.now();
  const ago = (hours: number) => new Date(now - hours * 3600_000).toISOString();
  const statusFlags = [
    flag({ key: "checkout" }),
    flag({ key: "dark-mode" }),
    flag({ key: "fresh" }),
    flag({ key: "old-banner" }),
    flag({ key: "unlisted" }), // created after the status was read: no entry
  ];
  const statuses = [
    { flag_key: "checkout", status: "launched", last_evaluated_at: ago(2), evaluations_7d: 1200, values_7d: [{ value: "true", count: 1200 }] },
    {
      flag_key: "dark-mode",
      status: "active",
      last_evaluated_at: ago(0.1),
      evaluations_7d: 40,
      values_7d: [
        { value: "false", count: 10 },
        { value: "true", count: 30 },
      ],
    },
    { flag_key: "fresh", status: "new", last_evaluated_at: null, evaluations_7d: 0, values_7d: [] },
    { flag_key: "old-banner", status: "inactive", last_evaluated_at: ago(24 * 20), evaluations_7d: 0, values_7d: [] },
  ];
  const routes = (status: unknown = statuses) => ({
    ...scopeRoutes(),
    "GET /api/environments/e1/flags": statusFlags,
    "GET /api/environments/e1/flag-status": status,
  });
  const rowOf = async (key: string) => (await screen.findByRole("link", { name: key })).closest("tr")!;
  const statusCell = (row: HTMLElement) => within(row).getAllByRole("cell")[2]!;
  const lastCell = (row: HTMLElement) => within(row).getAllByRole("cell")[3]!;

  test("each flag shows its status badge, explained, and when it was last evaluated", async () => {
    const { calls } = renderScreen(<FlagList />, { url, pattern, routes: routes() });
    const checkout = await rowOf("checkout");
    expect(screen.getByRole("columnheader", { name: "Status" })).toBeInTheDocument();
    expect(screen.getByRole("columnheader", { name: "Last evaluated" })).toBeInTheDocument();
    await waitFor(() => expect(statusCell(checkout)).toHaveTextContent(/^Launched/));
    expect(calls.filter((c) => c.method === "GET" && c.path === "/api/environments/e1/flag-status")).toHaveLength(1);

    const badge = within(statusCell(checkout)).getByTitle(/can be removed from code/);
    expect(badge).toHaveTextContent("Launched: Every evaluation in the last 7 days returned the same value");
    expect(lastCell(checkout)).toHaveTextContent("2 hours ago");
    expect(within(lastCell(checkout)).getByText("2 hours ago")).toHaveAttribute("title", new Date(ago(2)).toLocaleString());

    const dark = await rowOf("dark-mode");
    expect(within(statusCell(dark)).getByTitle(/more than one value/)).toHaveTextContent(/^Active/);
    const fresh = await rowOf("fresh");
    expect(within(statusCell(fresh)).getByTitle(/not evaluated yet/)).toHaveTextContent(/^New/);
    expect(lastCell(fresh)).toHaveTextContent("Never");
    const old = await rowOf("old-banner");
    expect(within(statusCell(old)).getByTitle("Not evaluated in the last 7 days.")).toHaveTextContent(/^Inactive/);
    expect(lastCell(old)).toHaveTextContent("20 days ago");
    const unlisted = await rowOf("unlisted");
    expect(statusCell(unlisted)).toHaveTextContent("—");
    expect(lastCell(unlisted)).toHaveTextContent("—");
  });

  test("the status filter keeps one status, counts each, and comes from the URL", async () => {
    renderScreen(<FlagList />, { url: `${url}?status=inactive`, pattern, routes: routes() });
    const select = await screen.findByLabelText("Status");
    expect(select).toHaveValue("inactive");
    await screen.findByRole("link", { name: "old-banner" });
    expect(screen.getAllByRole("row")).toHaveLength(2); // header + old-banner
    expect(within(select).getByRole("option", { name: "Launched (1)" })).toBeInTheDocument();

    await userEvent.selectOptions(select, "launched");
    expect(screen.getByRole("link", { name: "checkout" })).toBeInTheDocument();
    expect(screen.queryByRole("link", { name: "old-banner" })).not.toBeInTheDocument();
    expect(screen.getAllByRole("row")).toHaveLength(2);

    // Combined with the other filters: nothing launched matches "dark".
    await userEvent.type(screen.getByLabelText("Search"), "dark");
    expect(await screen.findByText(/No flag here is launched/)).toBeInTheDocument();

    await userEvent.selectOptions(select, "");
    expect(screen.getByRole("link", { name: "dark-mode" })).toBeInTheDocument();
  });

  test("when the status cannot be read the list still shows, with — and a small notice", async () => {
    renderScreen(<FlagList />, {
      url: `${url}?status=launched`,
      pattern,
      routes: routes({ status: 500, body: { error: "internal error" } }),
    });
    const checkout = await rowOf("checkout");
    const notice = await screen.findByText(/Flag status could not be loaded/);
    expect(notice).toHaveTextContent("internal error");
    expect(notice).toHaveTextContent("the status filter is not applied");
    expect(statusCell(checkout)).toHaveTextContent("—");
    expect(lastCell(checkout)).toHaveTextContent("—");
    // Not narrowed by a filter it cannot apply: every unarchived flag is listed.
    expect(screen.getAllByRole("row")).toHaveLength(statusFlags.length + 1);
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
    // The list's own actions still work.
    expect(screen.getByRole("switch", { name: "Enable checkout" })).toBeEnabled();
  });
});

describe("an environment without flags", () => {
  test("offers New flag first, then connecting an app and starting from a file, with this project's and environment's slugs", async () => {
    renderScreen(<FlagList />, { url, pattern, routes: { ...scopeRoutes(), "GET /api/environments/e1/flags": [] } });
    expect(await screen.findByRole("heading", { name: "No flags yet" })).toBeInTheDocument();
    // New flag stays the primary action: in the header and in the empty state.
    const newFlag = screen.getAllByRole("link", { name: "New flag" });
    expect(newFlag).toHaveLength(2);
    for (const link of newFlag) {
      expect(link).toHaveAttribute("href", "/projects/p1/envs/e1/flags/new");
      expect(link).toHaveClass("btn-primary");
    }

    const connect = screen.getByRole("region", { name: "Connect an app" });
    expect(connect).toHaveTextContent("SDK key of this environment: a server key (sk_live_…)");
    expect(connect).toHaveTextContent("client key (pk_live_…)");
    expect(within(connect).getByRole("link", { name: "Create an SDK key for Production" })).toHaveAttribute(
      "href",
      "/projects/p1/envs/e1/keys",
    );
    // The same start-up code as SDK key creation, with the key left to fill in.
    expect(within(connect).getByTestId("snippet-go")).toHaveTextContent("export SWITCHYARD_SDK_KEY=sk_live_…");
    expect(within(connect).getByTestId("snippet-node")).toHaveTextContent("new OFREPProvider({");
    expect(within(connect).getByTestId("snippet-web")).toHaveTextContent("Bearer pk_live_…");

    const file = screen.getByRole("region", { name: "Start from a file" });
    expect(within(file).getByTestId("snippet-apply").textContent).toBe("switchyard apply -f flags.yaml\n");
    expect(within(file).getByTestId("snippet-flags-yaml").textContent).toBe(
      [
        "version: 1",
        "projects:",
        "  - slug: storefront",
        "    environments:",
        "      - slug: production",
        "        flags:",
        "          - key: new-checkout",
        "            is_enabled: true",
        "            rollout_percentage: 10",
        "",
      ].join("\n"),
    );
    expect(within(file).getByRole("button", { name: "Copy flags.yaml" })).toBeInTheDocument();
    expect(file).toHaveTextContent("See Flags as code in the documentation.");
    expect(await accessibilityProblems()).toEqual([]);
  });

  test("the file names the environment being looked at", async () => {
    renderScreen(<FlagList />, {
      url: "/projects/p1/envs/e2/flags",
      pattern,
      routes: { ...scopeRoutes(), "GET /api/environments/e2/flags": [] },
    });
    const file = await screen.findByRole("region", { name: "Start from a file" });
    expect(within(file).getByTestId("snippet-flags-yaml")).toHaveTextContent("- slug: staging");
    expect(screen.getByRole("link", { name: "Create an SDK key for Staging" })).toHaveAttribute("href", "/projects/p1/envs/e2/keys");
  });

  // FlagList offers writes to every member today (see canWrite there): the
  // dashboard does not know project roles. This is what a viewer gets once it does.
  test("without write access it only says there are no flags yet", () => {
    renderScreen(<FlagListEmpty projectId="p1" envId="e1" project={project} env={project.environments[0]} canWrite={false} />, {
      url,
      pattern,
    });
    expect(screen.getByRole("heading", { name: "No flags yet" })).toBeInTheDocument();
    expect(screen.getByText("Production has no flags yet. They show here as soon as someone creates one.")).toBeInTheDocument();
    expect(screen.queryByRole("link", { name: "New flag" })).not.toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Connect an app" })).not.toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Start from a file" })).not.toBeInTheDocument();
    expect(screen.queryByRole("link", { name: /SDK key/ })).not.toBeInTheDocument();
    expect(screen.queryByText(/switchyard apply/)).not.toBeInTheDocument();
  });

  test("a slug YAML would read as a number or a boolean is quoted", () => {
    expect(flagsFile("2024", "yes")).toContain('  - slug: "2024"\n    environments:\n      - slug: "yes"\n');
    expect(flagsFile("web-shop", "dev-2")).toContain("  - slug: web-shop\n    environments:\n      - slug: dev-2\n");
  });
});
