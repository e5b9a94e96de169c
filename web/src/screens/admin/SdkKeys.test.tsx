import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import { envUrl, scopeRoutes } from "../../test/fixtures";
import SdkKeys from "./SdkKeys";

const prodKey = {
  id: 3,
  name: "web",
  prefix: "sk_live_abcd",
  environment_id: "e1",
  environment_name: "Production",
  created_at: "2026-01-01T00:00:00Z",
};

test("creates a key for the chosen environment and shows the full key once", async () => {
  const { calls } = renderScreen(<SdkKeys />, {
    ...envUrl("keys"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/keys": [prodKey],
      "POST /api/projects/p1/keys": { ...prodKey, id: 4, name: "worker", key: "sk_live_FULLKEY", environment_id: "e2", environment_name: "Staging" },
    },
  });
  expect(await screen.findByRole("rowheader", { name: "web" })).toBeInTheDocument();
  const env = screen.getByLabelText("Environment");
  await screen.findByRole("option", { name: "Staging" });
  expect(env).toHaveValue("e1"); // the current environment is preselected
  await userEvent.type(screen.getByLabelText("Key name"), " worker ");
  await userEvent.selectOptions(env, "Staging");
  await userEvent.click(screen.getByRole("button", { name: "Create key" }));
  expect(await screen.findByTestId("secret")).toHaveTextContent("sk_live_FULLKEY");
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({ name: "worker", environment_id: "e2" });
});

test("revoking the last key shows the server's refusal in the dialog", async () => {
  const { calls } = renderScreen(<SdkKeys />, {
    ...envUrl("keys"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/keys": [prodKey],
      "DELETE /api/projects/p1/keys/3": { status: 422, body: { error: "the last SDK key of a project cannot be revoked" } },
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Revoke web" }));
  const dialog = screen.getByRole("dialog");
  await userEvent.click(within(dialog).getByRole("button", { name: "Revoke key" }));
  expect(await within(dialog).findByRole("alert")).toHaveTextContent("the last SDK key of a project cannot be revoked");
  expect(calls.filter((c) => c.method === "DELETE")).toHaveLength(1);
});
