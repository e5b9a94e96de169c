import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { flag, scopeRoutes } from "../../test/fixtures";
import { renderScreen } from "../../test/render";
import FlagList from "../flags/FlagList";
import Releases from "./Releases";
import { release } from "./testdata";

const rolledBack = release({
  id: "22222222-2222-4222-8222-222222222222",
  flag_key: "new-search",
  status: "rolled_back",
  stage_index: 1,
  reason: "metric purchase regressed",
  ended_at: "2026-11-20T12:00:00Z",
});

test("the list filters by status in the address and links each release", async () => {
  const { calls } = renderScreen(<Releases />, {
    url: "/projects/p1/envs/e1/releases",
    pattern: "/projects/:projectId/envs/:envId/releases",
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/releases": (c: { search: string }) =>
        ({ body: c.search.includes("status=rolled_back") ? [rolledBack] : [release(), rolledBack] }),
    },
  });
  const link = await screen.findByRole("link", { name: /Release of checkout/ });
  expect(link).toHaveAttribute("href", "/projects/p1/envs/e1/releases/11111111-1111-4111-8111-111111111111");
  const row = screen.getByRole("row", { name: /new-search/ });
  expect(row).toHaveTextContent("Rolled back");
  expect(row).toHaveTextContent("2 of 3 · 50 % for 1 h");
  expect(row).toHaveTextContent("metric purchase regressed");

  await userEvent.selectOptions(screen.getByLabelText("Status"), "rolled_back");
  await waitFor(() => expect(screen.queryByRole("link", { name: /Release of checkout/ })).not.toBeInTheDocument());
  expect(calls.filter((c) => c.path === "/api/environments/e1/releases").map((c) => c.search)).toContain("?status=rolled_back");
});

const rowOf = (key: string) => screen.getAllByRole("row").find((r) => within(r).queryByRole("link", { name: key }))!;

test("the flag list marks the flags being released, linking to the release", async () => {
  renderScreen(<FlagList />, {
    url: "/projects/p1/envs/e1/flags",
    pattern: "/projects/:projectId/envs/:envId/flags",
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": [flag(), flag({ key: "dark-mode" }), flag({ key: "new-search" })],
      "GET /api/environments/e1/releases": (c: { search: string }) => ({
        body: c.search.includes("status=paused") ? [release({ id: "33333333-3333-4333-8333-333333333333", flag_key: "dark-mode", status: "paused", stage_index: 2 })] : c.search.includes("status=running") ? [release({ stage_index: 1 })] : [],
      }),
    },
  });
  const badge = await screen.findByRole("link", { name: "releasing · 50 %" });
  expect(badge).toHaveAttribute("href", "/projects/p1/envs/e1/releases/11111111-1111-4111-8111-111111111111");
  expect(within(rowOf("checkout")).getByRole("link", { name: "releasing · 50 %" })).toBe(badge);
  const paused = screen.getByRole("link", { name: "release paused · 100 %" });
  expect(within(rowOf("dark-mode")).getByRole("link", { name: "release paused · 100 %" })).toBe(paused);
  expect(within(rowOf("new-search")).queryByText(/releas/)).not.toBeInTheDocument();
});
