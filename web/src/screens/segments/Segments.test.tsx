import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Schemas } from "../../api/client";
import { renderScreen } from "../../test/render";
import { envUrl, scopeRoutes } from "../../test/fixtures";
import Segments, { segmentUsage } from "./Segments";

const beta: Schemas["Segment"] = {
  id: "s1",
  environment_id: "e1",
  key: "beta",
  name: "Beta testers",
  description: "Opted in",
  rules: [{ attribute: "email", operator: "ends_with", values: ["@acme.com"], variant: "blue" }],
  created_at: "2026-01-01T00:00:00Z",
};

function flag(key: string, rules: Schemas["TargetingRule"][]): Schemas["Flag"] {
  return {
    key, environment_id: "e1", is_enabled: true, rollout_percentage: null, description: null, rules,
    flag_type: "boolean", default_value: true, disabled_value: false, variants: [], prerequisites: [], tags: [],
    owner_email: null, archived_at: null, client_side: false, version: 1, created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z",
  };
}
const flags = [
  flag("checkout", [{ segment_key: "beta" }, { segment_key: "beta" }]),
  flag("search", [{ attribute: "country", operator: "equals", values: ["FR"] }]),
  flag("banner", [{ segment_key: "beta" }]),
];

test("segmentUsage lists each referencing flag once", () => {
  expect(segmentUsage(flags).get("beta")).toEqual(["checkout", "banner"]);
  expect(segmentUsage(flags).get("country")).toBeUndefined();
});

test("the list shows which flags use a segment; delete warns and shows a 409", async () => {
  const { calls } = renderScreen(<Segments />, {
    ...envUrl("segments"),
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/segments": [beta],
      "GET /api/environments/e1/flags": flags,
      "DELETE /api/environments/e1/segments/beta": {
        status: 409,
        body: { error: "this environment requires approval: segment delete is not allowed" },
      },
    },
  });
  const row = (await screen.findByRole("rowheader", { name: /Beta testers/ })).closest("tr")!;
  expect(await within(row).findByRole("link", { name: "checkout" })).toHaveAttribute("href", "/projects/p1/envs/e1/flags/checkout");
  expect(within(row).getByRole("link", { name: "banner" })).toBeInTheDocument();
  expect(within(row).getByText("email ends with @acme.com")).toBeInTheDocument();

  await userEvent.click(within(row).getByRole("button", { name: "Delete beta" }));
  const dialog = screen.getByRole("dialog");
  expect(dialog).toHaveTextContent("Used by checkout, banner");
  await userEvent.click(within(dialog).getByRole("button", { name: "Delete segment" }));
  expect(await within(dialog).findByRole("alert")).toHaveTextContent("requires approval");
  expect(calls.filter((c) => c.method === "DELETE")).toHaveLength(1);
});

test("create validates rules, then sends key, name and parsed rules; 422 details sit by the rule", async () => {
  const { calls } = renderScreen(<Segments />, {
    ...envUrl("segments"),
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/segments": [],
      "GET /api/environments/e1/flags": [],
      "POST /api/environments/e1/segments": {
        status: 422,
        body: { error: "invalid", details: [{ field: "rules.1.values", message: "needs at least one value" }] },
      },
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "New segment" }));
  await userEvent.type(screen.getByLabelText("Name"), "Internal Staff");
  expect(screen.getByLabelText("Key")).toHaveValue("internal-staff");
  await userEvent.click(screen.getByRole("button", { name: "Create segment" }));
  const rule1 = screen.getByRole("group", { name: "Rule 1" });
  expect(within(rule1).getByLabelText("Rule 1 condition 1 Attribute")).toHaveAccessibleDescription("is required");
  expect(calls.some((c) => c.method === "POST")).toBe(false);

  await userEvent.type(within(rule1).getByLabelText("Rule 1 condition 1 Attribute"), "country");
  await userEvent.selectOptions(within(rule1).getByLabelText("Rule 1 condition 1 Operator"), "not_equals");
  await userEvent.type(within(rule1).getByLabelText("Rule 1 condition 1 Values"), "US{Enter}CA");
  await userEvent.click(screen.getByRole("button", { name: "Add rule" }));
  const rule2 = screen.getByRole("group", { name: "Rule 2" });
  await userEvent.type(within(rule2).getByLabelText("Rule 2 condition 1 Attribute"), "plan");
  await userEvent.type(within(rule2).getByLabelText("Rule 2 condition 1 Values"), "pro");
  await userEvent.click(screen.getByRole("button", { name: "Create segment" }));

  await waitFor(() => expect(within(rule2).getByLabelText("Rule 2 condition 1 Values")).toHaveAccessibleDescription(/needs at least one value/));
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({
    key: "internal-staff",
    name: "Internal Staff",
    description: null,
    rules: [
      { attribute: "country", operator: "not_equals", values: ["US", "CA"] },
      { attribute: "plan", operator: "equals", values: ["pro"] },
    ],
  });
});

test("editing PATCHes name, description and rules, keeping the rule's value", async () => {
  const { calls } = renderScreen(<Segments />, {
    ...envUrl("segments"),
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/segments": [beta],
      "GET /api/environments/e1/flags": flags,
      "PATCH /api/environments/e1/segments/beta": beta,
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Edit beta" }));
  expect(await screen.findByText(/Saving changes who gets which value in checkout, banner/)).toBeInTheDocument();
  const values = within(screen.getByRole("group", { name: "Rule 1" })).getByLabelText("Rule 1 condition 1 Values");
  await userEvent.clear(values);
  await userEvent.type(values, "@acme.com{Enter}@acme.io");
  await userEvent.click(screen.getByRole("button", { name: "Save segment" }));
  await screen.findByText("Saved segment beta.");
  expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({
    name: "Beta testers",
    description: "Opted in",
    rules: [{ attribute: "email", operator: "ends_with", values: ["@acme.com", "@acme.io"], variant: "blue" }],
  });
});

test("in an approval-required environment the screen says so and offers no writes", async () => {
  renderScreen(<Segments />, {
    ...envUrl("segments"),
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/segments": [beta],
      "GET /api/environments/e1/flags": [],
      "GET /api/projects/p1/environments": [
        { id: "e1", project_id: "p1", name: "Production", slug: "production", color: "#d92d20", is_default: false, require_approval: true, created_at: "2026-01-01T00:00:00Z" },
      ],
    },
  });
  expect(await screen.findByText(/Production requires approval: segments cannot be created/)).toBeInTheDocument();
  expect(screen.getByRole("button", { name: "New segment" })).toBeDisabled();
  expect(screen.getByRole("button", { name: "Delete beta" })).toBeDisabled();
  expect(screen.getByRole("button", { name: "Edit beta" })).toBeDisabled();
});

test("a segment rule of several conditions: input help, the body sent, and a 422 on a condition value", async () => {
  const { calls } = renderScreen(<Segments />, {
    ...envUrl("segments"),
    routes: {
      ...scopeRoutes(),
      "GET /api/environments/e1/segments": [],
      "GET /api/environments/e1/flags": [],
      "POST /api/environments/e1/segments": {
        status: 422,
        body: { error: "invalid", details: [{ field: "rules.0.conditions.0.values.0", message: "is not an RE2 pattern" }] },
      },
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "New segment" }));
  await userEvent.type(screen.getByLabelText("Name"), "Modern app");
  const rule1 = screen.getByRole("group", { name: "Rule 1" });
  await userEvent.type(within(rule1).getByLabelText("Rule 1 condition 1 Attribute"), "app_version");
  await userEvent.selectOptions(within(rule1).getByLabelText("Rule 1 condition 1 Operator"), "semver_greater_than_or_equal");
  const versions = within(rule1).getByLabelText("Rule 1 condition 1 Values");
  await userEvent.type(versions, "v2");
  expect(versions).toHaveAccessibleDescription(/“v2” is not a version/);
  await userEvent.type(versions, ".4.0");
  expect(versions).not.toHaveAttribute("aria-invalid");
  await userEvent.click(within(rule1).getByRole("button", { name: "Add condition to rule 1" }));
  await userEvent.type(within(rule1).getByLabelText("Rule 1 condition 2 Attribute"), "email");
  await userEvent.selectOptions(within(rule1).getByLabelText("Rule 1 condition 2 Operator"), "regex");
  const pattern = within(rule1).getByLabelText("Rule 1 condition 2 Values");
  await userEvent.type(pattern, "@acme\\.(io|dev)$");
  await userEvent.click(screen.getByRole("button", { name: "Create segment" }));
  await waitFor(() => expect(pattern).toHaveAccessibleDescription(/is not an RE2 pattern/));
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({
    key: "modern-app",
    name: "Modern app",
    description: null,
    rules: [
      {
        attribute: "app_version",
        operator: "semver_greater_than_or_equal",
        values: ["v2.4.0"],
        conditions: [{ attribute: "email", operator: "regex", values: ["@acme\\.(io|dev)$"] }],
      },
    ],
  });
});
