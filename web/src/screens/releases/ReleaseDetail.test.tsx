import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Schemas } from "../../api/client";
import { scopeRoutes } from "../../test/fixtures";
import { renderScreen, type Routes } from "../../test/render";
import type { LiftSeries } from "./LiftCanvas";
import ReleaseDetail, { allowed } from "./ReleaseDetail";
import { release } from "./testdata";

// The canvas drawing (uPlot) needs a real browser; here it records what it was given.
vi.mock("./LiftCanvas", () => ({
  default: ({ series }: { series: LiftSeries }) => <div data-testid="lift-canvas" data-series={JSON.stringify(series)} />,
}));

const ID = "11111111-1111-4111-8111-111111111111";
const base = `/api/environments/e1/releases/${ID}`;

function check(over: Partial<Schemas["ReleaseAnalysis"]>, metric: Partial<Schemas["ReleaseMetricAnalysis"]>): Schemas["ReleaseAnalysis"] {
  return {
    checked_at: "2026-11-20T10:01:00Z",
    stage_index: 0,
    percentage: 10,
    treatment_users: 120,
    control_users: 1100,
    srm: { users: 1220, treatment_users: 120, expected_share: 0.1, p_value: 0.71, mismatch: false },
    ...over,
    metrics: [
      {
        event_key: "purchase",
        kind: "conversion",
        bad_direction: "decrease",
        tolerance: 0.05,
        treatment: { users: 120, mean: 0.1, variance: 0.09 },
        control: { users: 1100, mean: 0.12, variance: 0.1 },
        lift: -0.1667,
        ci_lower: -0.62,
        ci_upper: 0.41,
        p_value: 0.52,
        regressed: false,
        ...metric,
      },
    ],
  };
}

const checks = [
  check({}, { treatment: { users: 40, mean: 0.1, variance: 0.09 }, control: { users: 400, mean: 0.1, variance: 0.09 }, lift: null, ci_lower: null, ci_upper: null, p_value: null }),
  check({ checked_at: "2026-11-20T10:02:00Z", stage_index: 1, percentage: 50 }, { treatment: { users: 600, mean: 0.02, variance: 0.02 }, control: { users: 610, mean: 0.6, variance: 0.24 }, lift: -0.9667, ci_lower: -0.99, ci_upper: -0.9, p_value: 0.00001, regressed: true }),
];

// open renders the page of release r; each action route's release becomes
// what GET answers from then on, as on the server.
function open(r: Schemas["Release"], actions: Record<string, Schemas["Release"] | { status: number; body: unknown }> = {}) {
  let current = r;
  const routes: Routes = { ...scopeRoutes(), [`GET ${base}`]: () => ({ body: current }), [`GET ${base}/checks`]: checks };
  for (const [route, reply] of Object.entries(actions)) {
    routes[route] = () => {
      if ("id" in reply) {
        current = reply;
        return { body: reply };
      }
      return reply;
    };
  }
  return renderScreen(<ReleaseDetail />, {
    url: `/projects/p1/envs/e1/releases/${ID}`,
    pattern: "/projects/:projectId/envs/:envId/releases/:id",
    routes,
  });
}

const button = (name: string) => screen.getByRole("button", { name });

test("actions follow the status", () => {
  expect(allowed("running")).toEqual({ pause: true, resume: false, rollback: true, cancel: true });
  expect(allowed("paused")).toEqual({ pause: false, resume: true, rollback: true, cancel: true });
  for (const s of ["completed", "rolled_back", "cancelled"] as const) {
    expect(allowed(s)).toEqual({ pause: false, resume: false, rollback: false, cancel: false });
  }
});

test("a running release: stages with the current one marked, Pause sends and shows the paused release", async () => {
  const running = release({ stage_index: 1, analysis: checks[1]! });
  const { calls } = open(running, {
    [`POST ${base}/pause`]: (release({ stage_index: 1, status: "paused", reason: "paused by ada@example.com" })),
  });
  await screen.findByRole("heading", { name: /Release of checkout/ });
  expect(button("Pause")).toBeEnabled();
  expect(button("Resume")).toBeDisabled();
  expect(button("Roll back")).toBeEnabled();
  expect(button("Cancel release")).toBeEnabled();
  const stages = screen.getAllByRole("listitem").filter((li) => li.classList.contains("release-stage"));
  expect(stages.map((li) => li.textContent)).toEqual(["10 %Stage 1 · 2 mindone", "50 %Stage 2 · 1 hnow", "100 %Stage 3 · 1 dto come"]);
  expect(stages[1]).toHaveAttribute("aria-current", "step");
  expect(screen.getByTestId("release-summary")).toHaveTextContent(/^Running at stage 2 of 3, 50 %;/);

  await userEvent.click(button("Pause"));
  await waitFor(() => expect(screen.getByTestId("release-reason")).toHaveTextContent("Paused: paused by ada@example.com"));
  expect(calls.find((c) => c.method === "POST")!.path).toBe(`${base}/pause`);
  expect(button("Pause")).toBeDisabled();
  expect(button("Resume")).toBeEnabled();
});

test("roll back asks first, then sends", async () => {
  const { calls } = open(release({ status: "paused", reason: "paused by ada@example.com" }), {
    [`POST ${base}/rollback`]: (release({ status: "rolled_back", reason: "rolled back by ada@example.com", ended_at: "2026-11-20T11:00:00Z" })),
  });
  await screen.findByRole("heading", { name: /Release of checkout/ });
  await userEvent.click(button("Roll back"));
  const dialog = screen.getByRole("dialog", { name: "Roll back this release?" });
  expect(calls.some((c) => c.method === "POST")).toBe(false);
  await userEvent.click(within(dialog).getByRole("button", { name: "Roll back to 0 %" }));
  await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
  expect(calls.find((c) => c.method === "POST")!.path).toBe(`${base}/rollback`);
  expect(screen.getByTestId("release-reason")).toHaveTextContent("Rolled back: rolled back by ada@example.com");
  for (const name of ["Pause", "Resume", "Roll back", "Cancel release"]) expect(button(name)).toBeDisabled();
});

test("an automatic rollback: its reason, the regressed metric, and the chart's name and data table", async () => {
  const reason = "metric purchase regressed: lift -96.7% (interval -99.0% to -90.0%) below the tolerance -5.0%";
  open(release({ status: "rolled_back", stage_index: 1, reason, ended_at: "2026-11-20T10:02:00Z", analysis: checks[1]! }));
  await screen.findByRole("heading", { name: /Release of checkout/ });
  expect(screen.getByTestId("release-reason")).toHaveTextContent(`Rolled back: ${reason}`);
  expect(screen.getByTestId("release-summary")).toHaveTextContent("Rolled back at stage 2 of 3, 50 %: the flag’s rollout is 0 %.");
  expect(screen.getAllByRole("listitem").filter((li) => li.classList.contains("release-stage")).map((li) => li.textContent)).toEqual([
    "10 %Stage 1 · 2 mindone",
    "50 %Stage 2 · 1 hlast",
    "100 %Stage 3 · 1 dnot reached",
  ]);
  expect(screen.getByText("regressed")).toBeInTheDocument();

  const chart = screen.getByRole("img", { name: /Lift of purchase over the checks/ });
  expect(chart).toHaveAccessibleName(expect.stringContaining("Latest lift −96.7%, interval −99.0% to −90.0%"));
  expect(chart).toHaveAccessibleName(expect.stringContaining("rolls back when the whole interval is below −5.0% (the tolerance)"));
  const table = screen.getByRole("table", { name: "Lift of purchase over the checks" });
  const rows = within(table).getAllByRole("row").slice(1);
  expect(rows.map((r) => within(r).getAllByRole("cell").map((c) => c.textContent))).toEqual([
    ["1 of 3 (10 %)", "40 / 400", "10.0% / 10.0%", "—", "—", "—", "No"],
    ["2 of 3 (50 %)", "600 / 610", "2.0% / 60.0%", "−96.7%", "−99.0% to −90.0%", "< 0.0001", "Yes"],
  ]);
  // The canvas gets the same numbers in percent, with the tolerance line.
  const series = JSON.parse((await screen.findByTestId("lift-canvas")).dataset.series!) as LiftSeries;
  expect(series.lift).toEqual([null, -96.67]);
  expect(series.lower).toEqual([null, -99]);
  expect(series.line).toBe(-5);
  expect(series.x).toEqual([Date.parse("2026-11-20T10:01:00Z") / 1000, Date.parse("2026-11-20T10:02:00Z") / 1000]);
});

test("an unknown release says so", async () => {
  open(release(), { [`GET ${base}`]: { status: 404, body: { error: "release not found" } } });
  await screen.findByText("Release not found");
});
