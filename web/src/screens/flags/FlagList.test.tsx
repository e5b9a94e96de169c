import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import { flagKeys } from "../../lib/stream";
import FlagList from "./FlagList";
import { flag, scopeRoutes } from "../../test/fixtures";

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
