import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen, type Call } from "../../test/render";
import Integrations from "./Integrations";
import { me, scopeRoutes } from "../../test/fixtures";

const reviewer = { ...me, role: "editor" as const };

const url = `/projects/p1/envs/e1/integrations`;
const pattern = "/projects/:projectId/envs/:envId/integrations";

const hook = {
  id: "aaaaaaaa-0000-0000-0000-000000000001",
  environment_id: "e1",
  name: "Deploy bot",
  url: "https://ci.example.com/hook",
  has_secret: true,
  enabled: true,
  created_at: "2026-11-20T09:00:00Z",
};
const chat = {
  id: "bbbbbbbb-0000-0000-0000-000000000001",
  environment_id: "e1",
  kind: "slack",
  name: "#releases",
  webhook_url_preview: "…a1b2",
  events: ["flag.updated"],
  enabled: true,
  created_at: "2026-11-20T09:00:00Z",
};

function routes(extra: Record<string, unknown> = {}) {
  return {
    ...scopeRoutes(reviewer),
    "GET /api/environments/e1/webhooks": [hook],
    "GET /api/environments/e1/integrations": [chat],
    ...extra,
  };
}
const post = (calls: Call[], path: string) => calls.find((c) => c.method !== "GET" && c.path === path);

test("creating a webhook with a generated secret sends it and shows it once", async () => {
  const { calls } = renderScreen(<Integrations />, {
    url,
    pattern,
    routes: routes({ "POST /api/environments/e1/webhooks": { ...hook, id: "new", name: "Audit sink" } }),
  });
  await userEvent.click(await screen.findByRole("button", { name: "Add webhook" }));
  const dialog = screen.getByRole("dialog", { name: "Add a webhook" });
  await userEvent.type(within(dialog).getByLabelText("Name"), "Audit sink");
  await userEvent.type(within(dialog).getByLabelText("URL"), "https://sink.example.com/in");
  await userEvent.click(within(dialog).getByRole("button", { name: "Generate" }));
  const secret = (within(dialog).getByLabelText(/Signing secret/) as HTMLInputElement).value;
  expect(secret).toMatch(/^[0-9a-f]{64}$/);
  await userEvent.click(within(dialog).getByRole("button", { name: "Create webhook" }));
  expect(await screen.findByTestId("secret")).toHaveTextContent(secret);
  expect(post(calls, "/api/environments/e1/webhooks")?.body).toEqual({
    name: "Audit sink",
    url: "https://sink.example.com/in",
    enabled: true,
    secret,
  });
});

test("a webhook URL rejected by the server is shown next to the URL field", async () => {
  renderScreen(<Integrations />, {
    url,
    pattern,
    routes: routes({
      "POST /api/environments/e1/webhooks": {
        status: 422,
        body: { error: "url: must be an absolute http(s) URL", details: [{ field: "url", message: "must be an absolute http(s) URL" }] },
      },
    }),
  });
  await userEvent.click(await screen.findByRole("button", { name: "Add webhook" }));
  const dialog = screen.getByRole("dialog");
  await userEvent.type(within(dialog).getByLabelText("Name"), "x");
  await userEvent.type(within(dialog).getByLabelText("URL"), "ftp://nope");
  await userEvent.click(within(dialog).getByRole("button", { name: "Create webhook" }));
  await screen.findByText("must be an absolute http(s) URL");
  expect(within(dialog).getByLabelText("URL")).toHaveAccessibleDescription(/must be an absolute http\(s\) URL/);
});

test("editing a webhook sends only what changed; removing the secret sends null", async () => {
  const { calls } = renderScreen(<Integrations />, {
    url,
    pattern,
    routes: routes({ [`PATCH /api/environments/e1/webhooks/${hook.id}`]: { ...hook, has_secret: false } }),
  });
  const row = await screen.findByRole("row", { name: /Deploy bot/ });
  await userEvent.click(within(row).getByRole("button", { name: "Edit" }));
  const dialog = screen.getByRole("dialog");
  await userEvent.click(within(dialog).getByLabelText(/Remove it/));
  await userEvent.click(within(dialog).getByRole("button", { name: "Save" }));
  await waitFor(() => expect(post(calls, `/api/environments/e1/webhooks/${hook.id}`)?.body).toEqual({ secret: null }));
});

test("disabling a webhook and deleting one (after confirming)", async () => {
  const { calls } = renderScreen(<Integrations />, {
    url,
    pattern,
    routes: routes({
      [`PATCH /api/environments/e1/webhooks/${hook.id}`]: { ...hook, enabled: false },
      [`DELETE /api/environments/e1/webhooks/${hook.id}`]: { status: 204 },
    }),
  });
  await userEvent.click(await screen.findByRole("switch", { name: "Enable webhook Deploy bot" }));
  await waitFor(() => expect(post(calls, `/api/environments/e1/webhooks/${hook.id}`)?.body).toEqual({ enabled: false }));
  const row = screen.getByRole("row", { name: /Deploy bot/ });
  await userEvent.click(within(row).getByRole("button", { name: "Delete" }));
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);
  await userEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Delete webhook" }));
  await waitFor(() => expect(calls.some((c) => c.method === "DELETE")).toBe(true));
});

test("the delivery log shows status, event and transport errors", async () => {
  renderScreen(<Integrations />, {
    url,
    pattern,
    routes: routes({
      [`GET /api/environments/e1/webhooks/${hook.id}/deliveries`]: [
        { id: 2, webhook_id: hook.id, event: "flag.updated", status_code: null, response_body: null, error: "dial tcp: connection refused", delivered_at: "2026-11-22T09:00:01Z" },
        { id: 1, webhook_id: hook.id, event: "flag.created", status_code: 200, response_body: "ok", error: null, delivered_at: "2026-11-22T08:00:00Z" },
      ],
    }),
  });
  const row = await screen.findByRole("row", { name: /Deploy bot/ });
  const toggle = within(row).getByRole("button", { name: "Deliveries" });
  await userEvent.click(toggle);
  expect(toggle).toHaveAttribute("aria-expanded", "true");
  const log = await screen.findByRole("table", { name: "Deliveries of Deploy bot" });
  const failed = within(log).getByRole("row", { name: /flag\.updated/ });
  expect(failed).toHaveTextContent("no response");
  expect(failed).toHaveTextContent("connection refused");
  expect(within(log).getByRole("row", { name: /flag\.created/ })).toHaveTextContent("200");
});

test("connecting a chat channel: events chosen, URL error from the server next to the field", async () => {
  const { calls } = renderScreen(<Integrations />, {
    url,
    pattern,
    routes: routes({
      "POST /api/environments/e1/integrations": {
        status: 422,
        body: { error: "webhook_url: plain http is allowed only for loopback hosts", details: [{ field: "webhook_url", message: "plain http is allowed only for loopback hosts" }] },
      },
    }),
  });
  await userEvent.click(await screen.findByRole("button", { name: "Connect a channel" }));
  const dialog = screen.getByRole("dialog");
  await userEvent.selectOptions(within(dialog).getByLabelText("Provider"), "teams");
  await userEvent.type(within(dialog).getByLabelText("Name"), "Ops");
  await userEvent.type(within(dialog).getByLabelText("Webhook URL"), "http://example.com/hook");
  await userEvent.click(within(dialog).getByLabelText("change_request.rejected"));
  await userEvent.click(within(dialog).getByLabelText("flag.deleted"));
  await userEvent.click(within(dialog).getByRole("button", { name: "Connect" }));
  expect(await within(dialog).findByText("plain http is allowed only for loopback hosts")).toBeInTheDocument();
  expect(within(dialog).getByLabelText("Webhook URL")).toHaveAttribute("aria-invalid", "true");
  expect(post(calls, "/api/environments/e1/integrations")?.body).toEqual({
    kind: "teams",
    name: "Ops",
    webhook_url: "http://example.com/hook",
    events: ["flag.deleted", "change_request.rejected"],
    enabled: true,
  });
});

test("editing a chat integration keeps the URL unless a new one is typed", async () => {
  const { calls } = renderScreen(<Integrations />, {
    url,
    pattern,
    routes: routes({ [`PATCH /api/environments/e1/integrations/${chat.id}`]: { ...chat, name: "#deploys" } }),
  });
  const row = await screen.findByRole("row", { name: /#releases/ });
  await userEvent.click(within(row).getByRole("button", { name: "Edit" }));
  const dialog = screen.getByRole("dialog");
  expect(within(dialog).getByText(/Current URL ends …a1b2/)).toBeInTheDocument();
  await userEvent.clear(within(dialog).getByLabelText("Name"));
  await userEvent.type(within(dialog).getByLabelText("Name"), "#deploys");
  await userEvent.click(within(dialog).getByLabelText("flag.updated"));
  await userEvent.click(within(dialog).getByRole("button", { name: "Save" }));
  await waitFor(() =>
    expect(post(calls, `/api/environments/e1/integrations/${chat.id}`)?.body).toEqual({ name: "#deploys", events: [] }),
  );
});

test("send test message reports the provider's answer", async () => {
  let status: number | null = 404;
  renderScreen(<Integrations />, {
    url,
    pattern,
    routes: routes({
      [`POST /api/environments/e1/integrations/${chat.id}/test`]: () => ({
        id: 9,
        integration_id: chat.id,
        event: "test",
        status_code: status,
        response_body: status === 404 ? "no_service" : "ok",
        error: null,
        delivered_at: "2026-11-22T09:00:00Z",
      }),
    }),
  });
  const row = await screen.findByRole("row", { name: /#releases/ });
  await userEvent.click(within(row).getByRole("button", { name: "Send test message" }));
  const alert = await screen.findByText(/Test message to #releases failed \(HTTP 404\)/);
  expect(alert.closest("[role=alert]")).toHaveTextContent("no_service");
  status = 200;
  await userEvent.click(within(row).getByRole("button", { name: "Send test message" }));
  expect(await screen.findByText("Test message delivered to #releases (HTTP 200).")).toBeInTheDocument();
});

test("non-admins see a permission message instead of the lists", async () => {
  renderScreen(<Integrations />, {
    url,
    pattern,
    routes: routes({
      "GET /api/environments/e1/webhooks": { status: 403, body: { error: "project admin role required" } },
      "GET /api/environments/e1/integrations": { status: 403, body: { error: "project admin role required" } },
    }),
  });
  const alerts = await screen.findAllByRole("alert");
  expect(alerts[0]).toHaveTextContent("You do not have permission to manage webhooks (project admins only).");
  expect(screen.queryByRole("button", { name: "Add webhook" })).not.toBeInTheDocument();
});
