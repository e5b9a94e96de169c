import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import type { Schemas } from "../../api/client";
import ExperimentDetail, { verdict } from "./ExperimentDetail";

const url = "/projects/p1/envs/e1/experiments/checkout-v2";
const pattern = "/projects/:projectId/envs/:envId/experiments/:key";
const experiment: Schemas["Experiment"] = {
  id: "x1",
  environment_id: "e1",
  key: "checkout-v2",
  name: "Checkout v2",
  description: null,
  flag_key: "new-checkout",
  goal_event_key: "purchase",
  control_variant: "false",
  status: "running",
  created_at: "2026-11-20T10:00:00Z",
};
const result: Schemas["ExperimentResult"] = {
  experiment,
  control_variant: "false",
  total_exposed: 2200,
  total_converted: 320,
  variants: [
    { variant: "false", exposed: 1000, converted: 100, conversion_rate: 0.1, is_control: true, uplift: null, z_score: null, p_value: null, significant: false, lift_ci_lower: null, lift_ci_upper: null, sequential_p_value: null },
    { variant: "true", exposed: 1000, converted: 130, conversion_rate: 0.13, is_control: false, uplift: 0.3, z_score: 2.0966, p_value: 0.036027, significant: true, lift_ci_lower: -0.208706, lift_ci_upper: 0.808706, sequential_p_value: 0.562221 },
    { variant: "beta", exposed: 200, converted: 90, conversion_rate: 0.45, is_control: false, uplift: 3.5, z_score: 0.4, p_value: 0.68916, significant: false, lift_ci_lower: 1.685181, lift_ci_upper: 5.314819, sequential_p_value: 0.000003 },
  ],
};

test("results show formatted rates, uplift, z, p, badges and the control", async () => {
  renderScreen(<ExperimentDetail />, {
    url,
    pattern,
    routes: { "GET /api/environments/e1/experiments/checkout-v2/results": result },
  });
  const table = (await screen.findByRole("heading", { name: "Results by variant" })).parentElement!;
  const control = within(table).getByRole("row", { name: /false control/ });
  expect(within(control).getAllByRole("cell").map((c) => c.textContent)).toEqual(["1,000", "100", "10.00%", "—", "—", "—", "baseline"]);
  const treatment = within(table).getByRole("row", { name: /^true/ });
  expect(within(treatment).getAllByRole("cell").map((c) => c.textContent)).toEqual([
    "1,000",
    "130",
    "13.00%",
    "+30.0%",
    "2.10",
    "0.0360",
    "Significant at 95%",
  ]);
  expect(within(table).getByRole("row", { name: /^beta/ })).toHaveTextContent("Not significant");
  expect(screen.getByText(/“true” converts 30.0% better than the control “false” \(p = 0.0360\)/)).toBeInTheDocument();
  // overall rate 320 / 2200
  expect(screen.getByText("14.5%")).toBeInTheDocument();
  // the chart is there, labelled, with its interval for the control (Wilson, 100 of 1000: 8.3% to 12.0%)
  expect(screen.getByRole("img", { name: /Conversion rate by variant/ })).toHaveAccessibleName(
    expect.stringContaining("false (control): 10.0% of 1,000 users, 95% interval 8.3% to 12.0%"),
  );
});

test("refresh refetches, and status buttons patch the status", async () => {
  const { calls } = renderScreen(<ExperimentDetail />, {
    url,
    pattern,
    routes: {
      "GET /api/environments/e1/experiments/checkout-v2/results": result,
      "PATCH /api/environments/e1/experiments/checkout-v2": { body: { ...experiment, status: "paused" } },
    },
  });
  await screen.findByRole("heading", { name: "Results by variant" });
  const resultCalls = () => calls.filter((c) => c.path.endsWith("/results")).length;
  expect(resultCalls()).toBe(1);
  await userEvent.click(screen.getByRole("button", { name: "Refresh" }));
  await waitFor(() => expect(resultCalls()).toBe(2));
  await userEvent.click(screen.getByRole("button", { name: "Pause" }));
  await waitFor(() => expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ status: "paused" }));
  await waitFor(() => expect(resultCalls()).toBe(3));
});

test("an unknown experiment reads as not found", async () => {
  renderScreen(<ExperimentDetail />, {
    url,
    pattern,
    routes: { "GET /api/environments/e1/experiments/checkout-v2/results": { status: 404, body: { error: "not found" } } },
  });
  expect(await screen.findByRole("heading", { name: "Experiment not found" })).toBeInTheDocument();
});

test("the verdict says when nothing is significant or there is no data", () => {
  expect(verdict({ ...result, variants: [] })).toBe("No exposures yet.");
  expect(verdict({ ...result, variants: [result.variants[0]!, result.variants[2]!] })).toBe(
    "No variant differs significantly from the control “false” at 95%.",
  );
  expect(
    verdict({ ...result, variants: [result.variants[0]!, { ...result.variants[1]!, uplift: -0.25 }] }),
  ).toMatch(/“true” converts 25.0% worse/);
});
