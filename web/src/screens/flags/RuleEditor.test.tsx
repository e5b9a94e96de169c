// The flag editor's rule editor (docs/reference/evaluation.md, Conditions):
// several conditions per rule, input help by operator, the rule's rollout and
// split, and 422 details next to the condition value they name.
import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen, type Call, type Routes } from "../../test/render";
import { flag, scopeRoutes } from "../../test/fixtures";
import FlagEditor from "./FlagEditor";

const segments = [
  { id: "s1", environment_id: "e1", name: "Beta users", key: "beta", description: null, rules: [], created_at: "2026-11-01T00:00:00Z" },
];

function create(routes: Routes = {}) {
  return renderScreen(<FlagEditor />, {
    url: "/projects/p1/envs/e1/flags/new",
    pattern: "/projects/:projectId/envs/:envId/flags/new",
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": [],
      "GET /api/environments/e1/segments": segments,
      "POST /api/environments/e1/flags": (c: Call) => ({ ...flag(), ...(c.body as object), version: 1 }),
      ...routes,
    },
  });
}

function edit(current: ReturnType<typeof flag>, routes: Routes = {}) {
  return renderScreen(<FlagEditor />, {
    url: "/projects/p1/envs/e1/flags/checkout",
    pattern: "/projects/:projectId/envs/:envId/flags/:key",
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/flags": [current],
      "GET /api/environments/e1/flags/checkout": current,
      "GET /api/environments/e1/segments": segments,
      ...routes,
    },
  });
}

test("a rule of two conditions with a rule rollout and a split is posted in the contract's shape", async () => {
  const { calls } = create();
  await userEvent.type(await screen.findByLabelText("Key"), "checkout");
  await userEvent.selectOptions(screen.getByLabelText("Type"), "string");
  await userEvent.type(screen.getByLabelText("Default value"), "classic");
  await userEvent.click(screen.getByRole("button", { name: "Add rule" }));
  await userEvent.type(screen.getByLabelText("Rule 1 condition 1 Attribute"), "country");
  await userEvent.type(screen.getByLabelText("Rule 1 condition 1 Values"), "DE");
  await userEvent.click(screen.getByRole("button", { name: "Add condition to rule 1" }));
  await userEvent.type(screen.getByLabelText("Rule 1 condition 2 Attribute"), "app_version");
  await userEvent.selectOptions(screen.getByLabelText("Rule 1 condition 2 Operator"), "semver_greater_than_or_equal");
  await userEvent.type(screen.getByLabelText("Rule 1 condition 2 Values"), "2.4.0");
  await userEvent.type(screen.getByLabelText("Rule 1 Rollout %"), "50");
  const serves = screen.getByRole("group", { name: "Rule 1: Matching users get" });
  await userEvent.click(within(serves).getByRole("radio", { name: "a split" }));
  await userEvent.click(screen.getByRole("button", { name: "Add variant to rule 1" }));
  await userEvent.click(screen.getByRole("button", { name: "Add variant to rule 1" }));
  await userEvent.type(screen.getByLabelText("Rule 1 variant 1 value"), "one-page");
  await userEvent.type(screen.getByLabelText("Rule 1 variant 1 weight"), "3");
  await userEvent.type(screen.getByLabelText("Rule 1 variant 2 value"), "express");
  await userEvent.type(screen.getByLabelText("Rule 1 variant 2 weight"), "1");
  expect(screen.getByText("75%")).toBeInTheDocument();
  await userEvent.click(screen.getByRole("button", { name: "Create flag" }));
  await waitFor(() => expect(screen.getByTestId("navigated")).toBeInTheDocument());
  expect((calls.find((c) => c.method === "POST")?.body as { rules: unknown }).rules).toEqual([
    {
      attribute: "country",
      operator: "equals",
      values: ["DE"],
      conditions: [{ attribute: "app_version", operator: "semver_greater_than_or_equal", values: ["2.4.0"] }],
      rollout_percentage: 50,
      variants: [
        { value: "one-page", weight: 3 },
        { value: "express", weight: 1 },
      ],
    },
  ]);
});

test("versions and patterns are checked as you type, and block saving", async () => {
  const { calls } = create();
  await userEvent.type(await screen.findByLabelText("Key"), "checkout");
  await userEvent.click(screen.getByRole("button", { name: "Add rule" }));
  await userEvent.type(screen.getByLabelText("Rule 1 condition 1 Attribute"), "app_version");
  await userEvent.selectOptions(screen.getByLabelText("Rule 1 condition 1 Operator"), "semver_greater_than_or_equal");
  const versions = screen.getByLabelText("Rule 1 condition 1 Values");
  expect(versions).toHaveAccessibleDescription(/Semantic versions/);
  await userEvent.type(versions, "2.4");
  expect(versions).toHaveAccessibleDescription(/“2.4” is not a version/);
  await userEvent.type(versions, ".0");
  expect(versions).not.toHaveAttribute("aria-invalid");

  await userEvent.click(screen.getByRole("button", { name: "Add condition to rule 1" }));
  await userEvent.type(screen.getByLabelText("Rule 1 condition 2 Attribute"), "email");
  await userEvent.selectOptions(screen.getByLabelText("Rule 1 condition 2 Operator"), "regex");
  const patterns = screen.getByLabelText("Rule 1 condition 2 Values");
  await userEvent.type(patterns, "^[[a-z]+@acme\\.com$");
  expect(patterns).not.toHaveAttribute("aria-invalid");
  await userEvent.type(patterns, "{Enter}foo(?=bar)");
  expect(patterns).toHaveAccessibleDescription(/Line 2: “foo\(\?=bar\)” uses a look-around/);
  await userEvent.click(screen.getByRole("button", { name: "Create flag" }));
  expect(screen.getByText(/Fix the 1 highlighted field/)).toBeInTheDocument();
  expect(calls.some((c) => c.method === "POST")).toBe(false);
});

test("before/after: a date picked in local time is sent as RFC 3339 with the offset; a typed value is checked", async () => {
  const { calls } = create();
  await userEvent.type(await screen.findByLabelText("Key"), "checkout");
  await userEvent.click(screen.getByRole("button", { name: "Add rule" }));
  await userEvent.type(screen.getByLabelText("Rule 1 condition 1 Attribute"), "signed_up_at");
  await userEvent.selectOptions(screen.getByLabelText("Rule 1 condition 1 Operator"), "after");
  const picker = screen.getByLabelText(/Rule 1 condition 1 date, UTC/);
  expect(picker).toHaveAttribute("type", "datetime-local");
  fireEvent.change(picker, { target: { value: "2026-03-01T09:30" } });
  const sent = screen.getByLabelText(/Rule 1 condition 1 value\)/) as HTMLInputElement;
  expect(sent.value).toMatch(/^2026-03-01T09:30:00[+-]\d\d:\d\d$/);
  const wire = sent.value;

  await userEvent.clear(sent);
  await userEvent.type(sent, "2026-03-01");
  expect(screen.getByRole("group", { name: "Rule 1 condition 1 Dates" })).toHaveAccessibleDescription(/is not an instant/);
  await userEvent.clear(sent);
  await userEvent.type(sent, wire);
  // The picker shows the typed instant in local time (jsdom drops ":00" seconds, as browsers do).
  expect((picker as HTMLInputElement).value).toBe("2026-03-01T09:30");
  await userEvent.click(screen.getByRole("button", { name: "Create flag" }));
  await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
  expect((calls.find((c) => c.method === "POST")?.body as { rules: unknown }).rules).toEqual([
    { attribute: "signed_up_at", operator: "after", values: [wire] },
  ]);
});

test("a 422 on a condition's value lands next to that condition, and a rule rollout error by its field", async () => {
  const current = flag({
    flag_type: "string",
    default_value: "a",
    disabled_value: "off",
    rules: [
      { attribute: "country", operator: "equals", values: ["NL"] },
      {
        attribute: "country",
        operator: "equals",
        values: ["DE"],
        conditions: [{ attribute: "app_version", operator: "semver_greater_than_or_equal", values: ["2.4.0", "3.0.0"] }],
        rollout_percentage: 20,
        variants: [
          { value: "b", weight: 1 },
          { value: "c", weight: 1 },
        ],
      },
    ],
  });
  edit(current, {
    "PATCH /api/environments/e1/flags/checkout": {
      status: 422,
      body: {
        error: "invalid rules",
        details: [
          { field: "rules.1.conditions.0.values.1", message: "is refused by the server" },
          { field: "rules.1.rollout_percentage", message: "is not allowed here" },
          { field: "rules.1.variants.0.value", message: "is not a string" },
        ],
      },
    },
  });
  // The loaded rule shows all of it: two rows, the rollout and the split.
  expect(await screen.findByLabelText("Rule 2 condition 2 Values")).toHaveValue("2.4.0\n3.0.0");
  expect(screen.getByLabelText("Rule 2 Rollout %")).toHaveValue(20);
  expect(within(screen.getByRole("group", { name: "Rule 2: Matching users get" })).getByRole("radio", { name: "a split" })).toBeChecked();
  expect(screen.getAllByText("50%")).toHaveLength(2);

  await userEvent.type(screen.getByLabelText("Description"), "!");
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  await waitFor(() =>
    expect(screen.getByLabelText("Rule 2 condition 2 Values")).toHaveAccessibleDescription(/Line 2: “3.0.0” is refused by the server/),
  );
  expect(screen.getByLabelText("Rule 2 condition 1 Values")).not.toHaveAccessibleDescription(/refused/);
  expect(screen.getByLabelText("Rule 2 Rollout %")).toHaveAccessibleDescription(/is not allowed here/);
  expect(screen.getByText("is not a string")).toBeInTheDocument();
});

test("removing a condition and clearing the split sends the rule without them", async () => {
  const current = flag({
    flag_type: "string",
    default_value: "a",
    disabled_value: "off",
    rules: [
      {
        attribute: "country",
        operator: "equals",
        values: ["DE"],
        conditions: [{ attribute: "plan", operator: "not_in", values: ["free"] }],
        rollout_percentage: 20,
        variants: [{ value: "b", weight: 1 }],
      },
    ],
  });
  const { calls } = edit(current, { "PATCH /api/environments/e1/flags/checkout": current });
  await userEvent.click(await screen.findByRole("button", { name: "Remove rule 1 condition 2" }));
  await userEvent.clear(screen.getByLabelText("Rule 1 Rollout %"));
  await userEvent.click(within(screen.getByRole("group", { name: "Rule 1: Matching users get" })).getByRole("radio", { name: "one value" }));
  await userEvent.type(screen.getByLabelText("Rule 1 Serves"), "b");
  await userEvent.click(screen.getByRole("button", { name: "Save flag" }));
  await waitFor(() => expect(calls.some((c) => c.method === "PATCH")).toBe(true));
  expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({
    rules: [{ attribute: "country", operator: "equals", values: ["DE"], variant: "b" }],
  });
});

test("a segment rule takes extra conditions; a boolean flag's rule serves true with no split", async () => {
  const { calls } = create();
  await userEvent.type(await screen.findByLabelText("Key"), "beta-banner");
  await userEvent.click(screen.getByRole("button", { name: "Add segment rule" }));
  await userEvent.selectOptions(screen.getByLabelText("Rule 1 Segment"), "beta");
  expect(screen.getByText(/Everyone in the segment/)).toBeInTheDocument();
  expect(screen.queryByRole("group", { name: "Rule 1: Matching users get" })).not.toBeInTheDocument();
  await userEvent.click(screen.getByRole("button", { name: "Add condition to rule 1" }));
  await userEvent.type(screen.getByLabelText("Rule 1 condition 1 Attribute"), "country");
  await userEvent.selectOptions(screen.getByLabelText("Rule 1 condition 1 Operator"), "not_in");
  const values = screen.getByLabelText("Rule 1 condition 1 Values");
  expect(values).toHaveAccessibleDescription(/none of them matches/);
  await userEvent.type(values, "US{Enter}CA");
  await userEvent.click(screen.getByRole("button", { name: "Create flag" }));
  await waitFor(() => expect(calls.some((c) => c.method === "POST")).toBe(true));
  expect((calls.find((c) => c.method === "POST")?.body as { rules: unknown }).rules).toEqual([
    { segment_key: "beta", conditions: [{ attribute: "country", operator: "not_in", values: ["US", "CA"] }] },
  ]);
});
