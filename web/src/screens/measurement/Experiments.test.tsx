import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import Experiments from "./Experiments";

const url = "/projects/p1/envs/e1/experiments";
const pattern = "/projects/:projectId/envs/:envId/experiments";
const exp = {
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
const base = {
  "GET /api/environments/e1/flags": [
    { key: "new-checkout", flag_type: "boolean", variants: [], default_value: false, archived_at: null },
  ],
  "GET /api/environments/e1/events/keys": [{ event_key: "purchase", total: 3, unique_users: 2, last_seen: "2026-11-20T10:00:00Z" }],
};

test("creating an experiment sends the typed fields and shows a duplicate key next to the key field", async () => {
  const { calls } = renderScreen(<Experiments />, {
    url,
    pattern,
    routes: {
      ...base,
      "GET /api/environments/e1/experiments": [],
      "POST /api/environments/e1/experiments": { status: 409, body: { error: "experiment key already exists" } },
    },
  });
  await userEvent.click((await screen.findAllByRole("button", { name: "New experiment" }))[0]!);
  const dialog = screen.getByRole("dialog", { name: "New experiment" });
  await userEvent.type(within(dialog).getByLabelText("Name"), "Checkout V2!");
  expect(within(dialog).getByLabelText("Key")).toHaveValue("checkout-v2");
  await userEvent.type(within(dialog).getByLabelText("Flag"), "new-checkout");
  await userEvent.type(within(dialog).getByLabelText("Goal event key"), "purchase");
  await userEvent.click(within(dialog).getByRole("button", { name: "Create experiment" }));
  await waitFor(() => expect(within(dialog).getByLabelText("Key")).toHaveAccessibleDescription(/already exists/));
  const post = calls.find((c) => c.method === "POST");
  expect(post?.body).toEqual({ name: "Checkout V2!", key: "checkout-v2", flag_key: "new-checkout", goal_event_key: "purchase" });
});

test("invalid keys are caught before sending, and 422 details land next to their fields", async () => {
  const { calls } = renderScreen(<Experiments />, {
    url,
    pattern,
    routes: {
      ...base,
      "GET /api/environments/e1/experiments": [],
      "POST /api/environments/e1/experiments": {
        status: 422,
        body: { error: "validation failed", details: [{ field: "goal_event_key", message: "must not be reserved" }] },
      },
    },
  });
  await userEvent.click((await screen.findAllByRole("button", { name: "New experiment" }))[0]!);
  const dialog = screen.getByRole("dialog");
  await userEvent.type(within(dialog).getByLabelText("Name"), "Test");
  await userEvent.clear(within(dialog).getByLabelText("Key"));
  await userEvent.type(within(dialog).getByLabelText("Key"), "bad key");
  await userEvent.click(within(dialog).getByRole("button", { name: "Create experiment" }));
  expect(within(dialog).getByLabelText("Key")).toHaveAccessibleDescription(/only letters/);
  expect(within(dialog).getByLabelText("Flag")).toHaveAccessibleDescription(/Flag key is required/);
  expect(calls.some((c) => c.method === "POST")).toBe(false);

  await userEvent.clear(within(dialog).getByLabelText("Key"));
  await userEvent.type(within(dialog).getByLabelText("Key"), "good");
  await userEvent.type(within(dialog).getByLabelText("Flag"), "f");
  await userEvent.type(within(dialog).getByLabelText("Goal event key"), "g");
  await userEvent.type(within(dialog).getByLabelText("Control variant (optional)"), "true");
  await userEvent.click(within(dialog).getByRole("button", { name: "Create experiment" }));
  await waitFor(() => expect(within(dialog).getByLabelText("Goal event key")).toHaveAccessibleDescription(/must not be reserved/));
  expect(calls.find((c) => c.method === "POST")?.body).toMatchObject({ key: "good", control_variant: "true" });
});

test("rows link to the results, and editing sends only what changed", async () => {
  const { calls } = renderScreen(<Experiments />, {
    url,
    pattern,
    routes: {
      ...base,
      "GET /api/environments/e1/experiments": [exp],
      // a body with a "status" field must be wrapped, or the fake reads it as the HTTP status
      "PATCH /api/environments/e1/experiments/checkout-v2": { body: { ...exp, status: "paused", control_variant: null } },
    },
  });
  const link = await screen.findByRole("link", { name: "Checkout v2" });
  expect(link).toHaveAttribute("href", "/projects/p1/envs/e1/experiments/checkout-v2");
  await userEvent.click(screen.getByRole("button", { name: "Edit Checkout v2" }));
  const dialog = screen.getByRole("dialog");
  await userEvent.selectOptions(within(dialog).getByLabelText("Status"), "paused");
  await userEvent.clear(within(dialog).getByLabelText("Control variant (optional)"));
  await userEvent.click(within(dialog).getByRole("button", { name: "Save changes" }));
  expect(await screen.findByText(/Saved experiment/)).toBeInTheDocument();
  expect(calls.find((c) => c.method === "PATCH")?.body).toEqual({ status: "paused", control_variant: null });
});

test("delete asks first, and a 403 reads as a permission problem", async () => {
  const { calls } = renderScreen(<Experiments />, {
    url,
    pattern,
    routes: {
      ...base,
      "GET /api/environments/e1/experiments": [exp],
      "DELETE /api/environments/e1/experiments/checkout-v2": { status: 403, body: { error: "forbidden" } },
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Delete Checkout v2" }));
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);
  await userEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Delete experiment" }));
  expect(await screen.findByText(/You do not have permission to delete experiments/)).toBeInTheDocument();
  expect(calls.filter((c) => c.method === "DELETE")).toHaveLength(1);
});
