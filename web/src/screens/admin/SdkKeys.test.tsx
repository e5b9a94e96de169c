import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { renderScreen } from "../../test/render";
import { envUrl, scopeRoutes } from "../../test/fixtures";
import SdkKeys from "./SdkKeys";
import { snippetsFor } from "./snippets";

const prodKey = {
  id: 3,
  name: "web",
  kind: "server",
  prefix: "sk_live_abcd",
  environment_id: "e1",
  environment_name: "Production",
  created_at: "2026-01-01T00:00:00Z",
};
const browserKey = { ...prodKey, id: 5, name: "storefront-web", kind: "client", prefix: "pk_live_wxyz" };

test("creates a server key by default for the chosen environment and shows the full key once, with server snippets", async () => {
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
  expect(screen.getByRole("radio", { name: /Server key/ })).toBeChecked();
  await userEvent.type(screen.getByLabelText("Key name"), " worker ");
  await userEvent.selectOptions(env, "Staging");
  await userEvent.click(screen.getByRole("button", { name: "Create server key" }));
  expect(await screen.findByTestId("secret")).toHaveTextContent("sk_live_FULLKEY");
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({ name: "worker", environment_id: "e2", kind: "server" });
  expect(screen.getByText(/Keep it on your servers/)).toBeInTheDocument();
  // The server key is read from the environment, never pasted into code.
  const go = screen.getByTestId("snippet-go");
  expect(go).toHaveTextContent('sdkgo.New(ctx, os.Getenv("SWITCHYARD_SDK_KEY"), sdkgo.WithBaseURL("http://localhost:3000"))');
  expect(go).toHaveTextContent("export SWITCHYARD_SDK_KEY=sk_live_FULLKEY");
  expect(screen.getByTestId("snippet-node")).toHaveTextContent("new OFREPProvider({");
  expect(screen.queryByTestId("snippet-web")).not.toBeInTheDocument();
});

test("a client key: the form says where it belongs, posts kind client, and shows the web OFREP snippet", async () => {
  const writeText = vi.fn(async () => undefined);
  Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
  const { calls } = renderScreen(<SdkKeys />, {
    ...envUrl("keys"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/keys": [prodKey],
      "POST /api/projects/p1/keys": { ...browserKey, key: "pk_live_PUBLISHABLE" },
    },
  });
  const client = await screen.findByRole("radio", { name: /Client key/ });
  expect(client).toHaveAccessibleDescription(/browsers and mobile apps: safe to publish/);
  expect(screen.getByRole("radio", { name: /Server key/ })).toHaveAccessibleDescription(/must never be in a web page or a mobile app/);
  await userEvent.type(screen.getByLabelText("Key name"), "storefront-web");
  await userEvent.click(client);
  await userEvent.click(screen.getByRole("button", { name: "Create client key" }));
  expect(await screen.findByTestId("secret")).toHaveTextContent("pk_live_PUBLISHABLE");
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({ name: "storefront-web", environment_id: "e1", kind: "client" });

  const web = screen.getByTestId("snippet-web");
  expect(web).toHaveTextContent("import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';");
  expect(web).toHaveTextContent("baseUrl: 'http://localhost:3000',"); // the dashboard's own origin
  expect(web).toHaveTextContent("headers: [['Authorization', 'Bearer pk_live_PUBLISHABLE']],");
  expect(screen.queryByTestId("snippet-go")).not.toBeInTheDocument();
  expect(screen.getByRole("link", { name: "see which" })).toHaveAttribute("href", "/projects/p1/envs/e1/flags?client_side=1");

  await userEvent.click(screen.getByRole("button", { name: /Copy Browser/ }));
  expect(writeText).toHaveBeenCalledWith(expect.stringContaining("Bearer pk_live_PUBLISHABLE"));
  expect(screen.getByRole("button", { name: /Copy Browser/ })).toHaveTextContent("Copied");
});

test("the list shows each key's kind and the screen explains why a browser sees no flag", async () => {
  renderScreen(<SdkKeys />, {
    ...envUrl("keys"),
    routes: { ...scopeRoutes(), "GET /api/projects/p1/keys": [prodKey, browserKey] },
  });
  const server = (await screen.findByRole("rowheader", { name: "web" })).closest("tr")!;
  expect(server).toHaveTextContent("Server key servers only");
  const client = screen.getByRole("rowheader", { name: "storefront-web" }).closest("tr")!;
  expect(client).toHaveTextContent("Client key browsers & apps");
  expect(screen.getByText(/A browser sees no flag until you mark it Client-side/)).toBeInTheDocument();
  expect(screen.getByRole("link", { name: "Client-side flags of Production" })).toHaveAttribute(
    "href",
    "/projects/p1/envs/e1/flags?client_side=1",
  );
  // Following the environment choice.
  await userEvent.selectOptions(screen.getByLabelText("Environment"), "Staging");
  expect(screen.getByRole("link", { name: "Client-side flags of Staging" })).toHaveAttribute(
    "href",
    "/projects/p1/envs/e2/flags?client_side=1",
  );
  expect(screen.getByRole("link", { name: /API reference/ })).toHaveAttribute("href", "/api/docs");
});

test("revoking the last key shows the server's refusal in the dialog", async () => {
  const { calls } = renderScreen(<SdkKeys />, {
    ...envUrl("keys"),
    routes: {
      ...scopeRoutes(),
      "GET /api/projects/p1/keys": [prodKey, browserKey],
      "DELETE /api/projects/p1/keys/3": { status: 422, body: { error: "the last SDK key of a project cannot be revoked" } },
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Revoke web" }));
  const dialog = screen.getByRole("dialog");
  // A client key does not count: this is still the only server key.
  expect(dialog).toHaveTextContent("This is the project's only server key");
  await userEvent.click(within(dialog).getByRole("button", { name: "Revoke key" }));
  expect(await within(dialog).findByRole("alert")).toHaveTextContent("the last SDK key of a project cannot be revoked");
  expect(calls.filter((c) => c.method === "DELETE")).toHaveLength(1);
});

test("a client key can always be revoked: no last-key warning", async () => {
  renderScreen(<SdkKeys />, {
    ...envUrl("keys"),
    routes: { ...scopeRoutes(), "GET /api/projects/p1/keys": [prodKey, browserKey] },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Revoke storefront-web" }));
  const dialog = screen.getByRole("dialog");
  expect(dialog).toHaveTextContent("Pages and apps using pk_live_wxyz…");
  expect(dialog).not.toHaveTextContent(/only server key/);
});

test("snippets: client keys get the web provider, server keys the Go SDK and the Node OFREP provider", () => {
  expect(snippetsFor("client", "pk_live_x", "https://flags.example.com").map((s) => s.id)).toEqual(["web"]);
  const server = snippetsFor("server", "sk_live_y", "https://flags.example.com");
  expect(server.map((s) => s.id)).toEqual(["go", "node"]);
  for (const s of server) {
    // The secret appears only on the export line, never in code that could be committed.
    expect(s.code.split("\n").filter((l) => l.includes("sk_live_y"))).toEqual([
      `// export SWITCHYARD_SDK_KEY=sk_live_y   (keep it in your secret store)`,
    ]);
    expect(s.code).toContain("https://flags.example.com");
  }
  expect(snippetsFor("client", "pk_live_x", "https://flags.example.com")[0]!.code).toContain(
    "@openfeature/web-sdk@1.10.0 @openfeature/ofrep-web-provider@0.4.3",
  );
});
