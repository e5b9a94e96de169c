import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import EnvSettings, { toPickerColor } from "./EnvSettings";
import { envUrl, scopeRoutes } from "../../test/fixtures";

const envs = [
  { id: "e1", project_id: "p1", name: "Production", slug: "production", color: "#d92d20", is_default: false, require_approval: false, created_at: "2026-01-01T00:00:00Z" },
  { id: "e2", project_id: "p1", name: "Staging", slug: "staging", color: "#f5a524", is_default: true, require_approval: true, created_at: "2026-01-01T00:00:00Z" },
];

test("#rgb colours are expanded for the colour picker", () => {
  expect(toPickerColor("#F0a")).toBe("#ff00aa");
  expect(toPickerColor("nope")).toBe("#6366f1");
});

test("the approval switch posts the new value and the shell's project list is refreshed", async () => {
  const { calls } = renderScreen(<EnvSettings />, {
    ...envUrl("settings"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/environments": envs,
      "POST /api/projects/p1/environments/e1/require-approval": { ...envs[0], require_approval: true },
    },
  });
  const prod = await screen.findByRole("article", { name: "Production" });
  const sw = within(prod).getByRole("switch", { name: "Require approval in Production" });
  expect(sw).toHaveAttribute("aria-checked", "false");
  expect(screen.getByRole("switch", { name: "Require approval in Staging" })).toHaveAttribute("aria-checked", "true");
  const projectLoads = calls.filter((c) => c.path === "/api/projects").length;
  await userEvent.click(sw);
  await screen.findByText("Production now requires approval for flag changes.");
  expect(calls.find((c) => c.path.endsWith("/require-approval"))?.body).toEqual({ require_approval: true });
  await waitFor(() => expect(calls.filter((c) => c.path === "/api/projects").length).toBeGreaterThan(projectLoads));
});

test("a colour must match the schema pattern; a valid one is PATCHed alone", async () => {
  const { calls } = renderScreen(<EnvSettings />, {
    ...envUrl("settings"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/environments": envs,
      "PATCH /api/projects/p1/environments/e1": { ...envs[0], color: "#0a0" },
    },
  });
  const prod = await screen.findByRole("article", { name: "Production" });
  const hex = within(prod).getByLabelText("Colour");
  await userEvent.clear(hex);
  await userEvent.type(hex, "#12345");
  await userEvent.click(within(prod).getByRole("button", { name: "Save" }));
  expect(within(prod).getByText("Use a hex colour like #1f9d55 or #f00.")).toBeInTheDocument();
  expect(calls.some((c) => c.method === "PATCH")).toBe(false);
  await userEvent.clear(hex);
  await userEvent.type(hex, "#0a0");
  await userEvent.click(within(prod).getByRole("button", { name: "Save" }));
  await screen.findByText("Saved Production.");
  expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ color: "#0a0" });
});

test("new environment derives its slug; deleting the project needs its name typed", async () => {
  const { calls } = renderScreen(<EnvSettings />, {
    ...envUrl("settings"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/environments": envs,
      "POST /api/projects/p1/environments": { ...envs[0], id: "e3", name: "QA Team", slug: "qa-team" },
      "DELETE /api/projects/p1": { status: 204 },
    },
  });
  await screen.findByRole("article", { name: "Production" });
  await userEvent.type(screen.getByLabelText("Environment name"), "QA Team");
  expect(screen.getByLabelText("Slug")).toHaveValue("qa-team");
  await userEvent.click(screen.getByRole("button", { name: "Create environment" }));
  await screen.findByText("Created QA Team.");
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({ name: "QA Team", slug: "qa-team", color: "#6366f1" });

  await userEvent.click(screen.getByRole("button", { name: "Delete project" }));
  const dialog = screen.getByRole("dialog");
  const confirm = within(dialog).getByRole("button", { name: "Delete this project" });
  expect(confirm).toBeDisabled();
  await userEvent.type(within(dialog).getByLabelText("Type “Storefront” to confirm"), "Storefront");
  await userEvent.click(confirm);
  await screen.findByTestId("navigated");
  expect(calls.find((c) => c.method === "DELETE")?.path).toBe("/api/projects/p1");
});
