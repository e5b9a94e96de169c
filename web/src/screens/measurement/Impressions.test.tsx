import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Call } from "../../test/render";
import { renderScreen } from "../../test/render";
import Impressions, { clampDays, ImpressionLog } from "./Impressions";

const url = "/projects/p1/envs/e1/impressions";
const pattern = "/projects/:projectId/envs/:envId/impressions";
const imp = (id: number, flag_key = "checkout", user_id: string | null = `u${id}`) => ({
  id,
  flag_key,
  user_id,
  value: id % 2 ? "true" : "false",
  context: { plan: "pro" },
  evaluated_at: "2026-11-22T07:00:00Z",
});

const params = (c: Call) => Object.fromEntries(new URLSearchParams(c.search));

test("the live log loads the newest rows, then asks only for rows after the highest id and puts them on top", async () => {
  let poll = 0;
  const { calls } = renderScreen(<ImpressionLog envId="e1" flagKeys={["checkout", "search"]} intervalMs={40} />, {
    url,
    routes: {
      "GET /api/environments/e1/impressions": (c: Call) => {
        const q = params(c);
        if (!q.since_id) return { items: [imp(2), imp(1)], total: 2 };
        poll++;
        return poll === 1 ? { items: [imp(4), imp(3)], total: 4 } : { items: [], total: 4 };
      },
    },
  });
  await waitFor(() => expect(screen.getByText("Showing 4 of 4 matching")).toBeInTheDocument());
  const users = screen.getAllByRole("row").slice(1).map((r) => within(r).getAllByRole("cell")[1]!.textContent);
  expect(users).toEqual(["u4", "u3", "u2", "u1"]);
  const list = calls.filter((c) => c.path.endsWith("/impressions"));
  expect(params(list[0]!)).toEqual({ limit: "50" });
  expect(params(list[1]!)).toEqual({ since_id: "2", limit: "200" });
  await waitFor(() => expect(calls.filter((c) => c.search.includes("since_id=4")).length).toBeGreaterThan(0));
});

test("pause stops polling, and filters restart the log with the filter sent", async () => {
  const { calls } = renderScreen(<ImpressionLog envId="e1" flagKeys={["checkout", "search"]} intervalMs={30} />, {
    url,
    routes: { "GET /api/environments/e1/impressions": { items: [imp(7)], total: 1 } },
  });
  await screen.findByText("Showing 1 of 1 matching");
  await userEvent.click(screen.getByRole("button", { name: "Pause" }));
  expect(screen.getByRole("status")).toHaveTextContent("Paused");
  const before = calls.length;
  await new Promise((r) => setTimeout(r, 150));
  expect(calls.length).toBe(before);

  await userEvent.selectOptions(screen.getByLabelText("Flag"), "search");
  await userEvent.type(screen.getByLabelText("User ID"), "alice{Enter}");
  await waitFor(() => expect(params(calls[calls.length - 1]!)).toEqual({ flag_key: "search", user_id: "alice", limit: "50" }));
  await userEvent.click(screen.getByRole("button", { name: "Resume" }));
  await waitFor(() => expect(params(calls[calls.length - 1]!)).toMatchObject({ flag_key: "search", user_id: "alice", since_id: "7" }));
});

test("stats, exposure of the busiest flag (switchable) and goal event keys", async () => {
  const { calls } = renderScreen(<Impressions />, {
    url,
    pattern,
    routes: {
      "GET /api/environments/e1/flags": [{ key: "checkout" }, { key: "search" }],
      "GET /api/environments/e1/impressions": { items: [], total: 0 },
      "GET /api/environments/e1/impressions/stats": [
        { flag_key: "search", total: 10, true_count: 1, false_count: 9, unique_users: 4, last_seen: "2026-11-22T07:00:00Z" },
        { flag_key: "checkout", total: 40, true_count: 30, false_count: 10, unique_users: 12, last_seen: "2026-11-22T07:00:00Z" },
      ],
      "GET /api/environments/e1/impressions/exposure": (c: Call) => ({
        flag_key: params(c).flag_key,
        total_impressions: 40,
        total_users: 12,
        variants: [
          { value: "true", impressions: 30, unique_users: 9 },
          { value: "false", impressions: 10, unique_users: 3 },
        ],
        timeline: [{ day: "2026-11-22", value: "true", count: 30 }],
      }),
      "GET /api/environments/e1/events/keys": [{ event_key: "purchase", total: 5, unique_users: 3, last_seen: "2026-11-22T07:00:00Z" }],
    },
  });
  const stats = (await screen.findByRole("row", { name: /^checkout 40/ }));
  expect(within(stats).getAllByRole("cell").slice(0, 5).map((c) => c.textContent)).toEqual(["40", "30", "10", "75.0%", "12"]);
  await waitFor(() =>
    expect(calls.filter((c) => c.path.endsWith("/exposure")).map(params)).toContainEqual({ flag_key: "checkout", days: "14" }),
  );
  const exposureRow = await screen.findByRole("row", { name: /^true 30 75\.0% 9$/ });
  expect(exposureRow).toBeInTheDocument();
  expect(screen.getByRole("img", { name: /Daily impressions of checkout/ })).toBeInTheDocument();

  await userEvent.click(screen.getByRole("button", { name: "Show exposure of search" }));
  await waitFor(() =>
    expect(calls.filter((c) => c.path.endsWith("/exposure")).map(params)).toContainEqual({ flag_key: "search", days: "14" }),
  );
  expect(screen.getByRole("row", { name: /^purchase 5 3/ })).toBeInTheDocument();
});

test("days are clamped to 1–90", () => {
  expect(clampDays(0)).toBe(1);
  expect(clampDays(120)).toBe(90);
  expect(clampDays(7.4)).toBe(7);
  expect(clampDays(Number.NaN)).toBe(14);
});
