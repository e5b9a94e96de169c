import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { Schemas } from "../../api/client";
import { accessibilityProblems } from "../../test/axe";
import { me, project } from "../../test/fixtures";
import { renderScreen, type Call, type Routes } from "../../test/render";
import Sso from "./Sso";
import { ssoBody, ssoFormFrom, validateSso } from "./ssoform";

const other: Schemas["Project"] = { ...project, id: "p2", name: "Billing", slug: "billing" };

const stored: Schemas["SSOSettings"] = {
  issuer: "https://idp.example.com",
  client_id: "switchyard",
  client_secret_set: true,
  scopes: ["openid", "email", "profile", "groups"],
  groups_claim: "groups",
  allowed_email_domains: ["example.com"],
  auto_provision: false,
  group_mappings: [{ group: "checkout-devs", project_id: "p2", role: "editor" }],
  admin_groups: ["switchyard-admins"],
  password_login: "admins_only",
  redirect_uri: "https://flags.example.com/api/auth/oidc/callback",
};

const discovery: Schemas["SSODiscovery"] = {
  issuer: "https://idp.example.com",
  authorization_endpoint: "https://idp.example.com/authorize",
  token_endpoint: "https://idp.example.com/token",
  userinfo_endpoint: "",
  jwks_uri: "https://idp.example.com/keys",
  signing_keys: 2,
};

const off = { status: 404, body: { error: "single sign-on is not configured" } };

function renderSso(routes: Routes) {
  return renderScreen(<Sso />, {
    url: "/admin/sso",
    routes: { "GET /api/auth/me": me, "GET /api/projects": [project, other], ...routes },
  });
}

test("off: says so, shows the defaults and the redirect URI this browser would use", async () => {
  const { queryClient } = renderSso({ "GET /api/workspace/sso": off });
  expect(await screen.findByText(/Single sign-on is off/)).toBeInTheDocument();
  await waitFor(() => expect(queryClient.getQueryState(["projects"])?.status).toBe("success"));
  expect(screen.getByLabelText("Issuer URL")).toHaveValue("");
  expect(screen.getByLabelText("Client ID")).toHaveValue("");
  expect(screen.getByLabelText("Client secret")).toHaveAttribute("type", "password");
  expect(screen.getByLabelText("Client secret")).not.toHaveAccessibleDescription(/A secret is stored/);
  expect(screen.getByLabelText("Scopes")).toHaveValue("openid email profile");
  expect(screen.getByLabelText("Groups claim")).toHaveValue("groups");
  expect(screen.getByLabelText("Allowed email domains")).toHaveValue("");
  expect(screen.getByLabelText("Create accounts at first sign-in")).toBeChecked();
  expect(screen.getByLabelText("Password sign-in")).toHaveValue("enabled");
  expect(screen.getByText("No mappings: project memberships are given by hand.")).toBeInTheDocument();
  expect(screen.getByTestId("redirect-uri")).toHaveTextContent(`${window.location.origin}/api/auth/oidc/callback`);
  expect(screen.getByRole("region", { name: "Redirect URI" })).toHaveTextContent(/set PUBLIC_URL to it/);
  expect(screen.getByRole("button", { name: "Copy the redirect URI" })).toBeInTheDocument();
  expect(screen.queryByRole("button", { name: "Turn off single sign-on" })).not.toBeInTheDocument();
  expect(screen.getByRole("link", { name: "SCIM provisioning" })).toHaveAttribute("href", "/admin/scim");
  expect(await accessibilityProblems()).toEqual([]);
});

test("on: loads the stored settings, the server's redirect URI and the stored-secret hint", async () => {
  const writeText = vi.fn(async () => undefined);
  Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
  renderSso({ "GET /api/workspace/sso": stored });
  expect(await screen.findByText(/Single sign-on is on/)).toBeInTheDocument();
  expect(screen.getByLabelText("Issuer URL")).toHaveValue("https://idp.example.com");
  expect(screen.getByLabelText("Client ID")).toHaveValue("switchyard");
  expect(screen.getByLabelText("Client secret")).toHaveValue("");
  expect(screen.getByLabelText("Client secret")).toHaveAccessibleDescription(
    "A secret is stored and never shown. Enter it again to save changes.",
  );
  expect(screen.getByLabelText("Scopes")).toHaveValue("openid email profile groups");
  expect(screen.getByLabelText("Allowed email domains")).toHaveValue("example.com");
  expect(screen.getByLabelText("Create accounts at first sign-in")).not.toBeChecked();
  expect(screen.getByLabelText("Password sign-in")).toHaveValue("admins_only");
  expect(screen.getByRole("option", { name: "Only workspace admins can sign in with a password" })).toHaveProperty("selected", true);
  expect(screen.getByLabelText("Admin groups")).toHaveValue("switchyard-admins");
  expect(screen.getByLabelText("Group, row 1")).toHaveValue("checkout-devs");
  await waitFor(() => expect(screen.getByLabelText("Project, row 1")).toHaveDisplayValue("Billing"));
  expect(screen.getByLabelText("Role, row 1")).toHaveValue("editor");
  expect(screen.getByTestId("redirect-uri")).toHaveTextContent("https://flags.example.com/api/auth/oidc/callback");
  expect(screen.getByRole("region", { name: "Redirect URI" })).not.toHaveTextContent(/PUBLIC_URL/);
  await userEvent.click(screen.getByRole("button", { name: "Copy the redirect URI" }));
  expect(writeText).toHaveBeenCalledWith("https://flags.example.com/api/auth/oidc/callback");
  expect(await accessibilityProblems()).toEqual([]);
});

test("obvious mistakes are refused next to their fields before anything is sent", async () => {
  const { calls } = renderSso({ "GET /api/workspace/sso": stored });
  const issuer = await screen.findByLabelText("Issuer URL");
  await userEvent.clear(issuer);
  await userEvent.type(issuer, "ftp://idp.example.com");
  await userEvent.clear(screen.getByLabelText("Client ID"));
  await userEvent.clear(screen.getByLabelText("Scopes"));
  await userEvent.type(screen.getByLabelText("Scopes"), "email, profile");
  await userEvent.clear(screen.getByLabelText("Allowed email domains"));
  await userEvent.type(screen.getByLabelText("Allowed email domains"), "example.com, ops@example.org");
  await userEvent.click(screen.getByRole("button", { name: "Add mapping" }));
  await userEvent.click(screen.getByRole("button", { name: "Save" }));

  expect(issuer).toHaveAttribute("aria-invalid", "true");
  expect(issuer).toHaveAccessibleDescription(/must be an http or https URL/);
  expect(screen.getByLabelText("Client ID")).toHaveAccessibleDescription("Enter the client ID the provider gave this application.");
  expect(screen.getByLabelText("Client secret")).toHaveAccessibleDescription(/Enter the client secret again/);
  expect(screen.getByLabelText("Scopes")).toHaveAccessibleDescription(/Include openid/);
  expect(screen.getByLabelText("Allowed email domains")).toHaveAccessibleDescription(/Not a domain name: ops@example.org/);
  expect(screen.getByLabelText("Group, row 2")).toHaveAccessibleDescription("Enter the group's name (or id) as the provider sends it.");
  expect(screen.getByLabelText("Project, row 2")).toHaveAccessibleDescription("Choose a project.");
  expect(screen.getByLabelText("Group, row 1")).not.toHaveAttribute("aria-invalid");
  expect(calls.some((c) => c.method === "PUT")).toBe(false);

  // Test connection checks the issuer the same way, and sends nothing either.
  await userEvent.click(screen.getByRole("button", { name: "Test connection" }));
  expect(calls.some((c) => c.method === "POST")).toBe(false);
});

test("save sends the whole form as the API's body, then shows the stored settings with the secret field empty", async () => {
  let current: Schemas["SSOSettings"] | null = null;
  const { calls } = renderSso({
    "GET /api/workspace/sso": () => current ?? off,
    "PUT /api/workspace/sso": (c: Call) => {
      const b = c.body as Schemas["SSOSettingsInput"];
      current = {
        ...stored,
        ...b,
        client_secret_set: true,
        scopes: b.scopes!,
        groups_claim: b.groups_claim ?? "groups",
        allowed_email_domains: b.allowed_email_domains!,
        auto_provision: b.auto_provision!,
        group_mappings: b.group_mappings!,
        admin_groups: b.admin_groups!,
        password_login: b.password_login!,
      };
      return current;
    },
  });
  await userEvent.type(await screen.findByLabelText("Issuer URL"), " https://idp.example.com ");
  await userEvent.type(screen.getByLabelText("Client ID"), "switchyard");
  await userEvent.type(screen.getByLabelText("Client secret"), "s3cret value");
  await userEvent.clear(screen.getByLabelText("Scopes"));
  await userEvent.type(screen.getByLabelText("Scopes"), "openid, email  profile,groups");
  await userEvent.clear(screen.getByLabelText("Groups claim"));
  await userEvent.type(screen.getByLabelText("Allowed email domains"), " example.com,example.org , ,");
  await userEvent.click(screen.getByLabelText("Create accounts at first sign-in"));
  await userEvent.selectOptions(screen.getByLabelText("Password sign-in"), "admins_only");
  await userEvent.type(screen.getByLabelText("Admin groups"), "Switchyard Admins, ops ,");

  await userEvent.click(screen.getByRole("button", { name: "Add mapping" }));
  await userEvent.type(screen.getByLabelText("Group, row 1"), " checkout-devs ");
  await userEvent.selectOptions(screen.getByLabelText("Project, row 1"), "Billing");
  await userEvent.selectOptions(screen.getByLabelText("Role, row 1"), "admin");
  await userEvent.click(screen.getByRole("button", { name: "Add mapping" }));
  await userEvent.type(screen.getByLabelText("Group, row 2"), "to-remove");
  await userEvent.click(screen.getByRole("button", { name: "Add mapping" }));
  await userEvent.type(screen.getByLabelText("Group, row 3"), "Storefront viewers");
  await userEvent.selectOptions(screen.getByLabelText("Project, row 3"), "Storefront");
  await userEvent.click(screen.getByRole("button", { name: "Remove row 2" }));
  expect(screen.getByLabelText("Group, row 2")).toHaveValue("Storefront viewers");

  await userEvent.click(screen.getByRole("button", { name: "Save" }));
  expect(await screen.findByText(/Saved: single sign-on is on/)).toBeInTheDocument();
  expect(calls.filter((c) => c.method === "PUT").map((c) => c.body)).toEqual([
    {
      issuer: "https://idp.example.com",
      client_id: "switchyard",
      client_secret: "s3cret value",
      scopes: ["openid", "email", "profile", "groups"],
      allowed_email_domains: ["example.com", "example.org"],
      auto_provision: false,
      group_mappings: [
        { group: "checkout-devs", project_id: "p2", role: "admin" },
        { group: "Storefront viewers", project_id: "p1", role: "viewer" },
      ],
      admin_groups: ["Switchyard Admins", "ops"],
      password_login: "admins_only",
    },
  ]);
  // The form starts again from what was stored: the secret is gone from the page.
  expect(screen.getByLabelText("Client secret")).toHaveValue("");
  expect(screen.getByLabelText("Client secret")).toHaveAccessibleDescription(/A secret is stored and never shown/);
  expect(screen.getByLabelText("Groups claim")).toHaveValue("groups");
  expect(screen.getByText(/Single sign-on is on/)).toBeInTheDocument();
  expect(screen.getByRole("button", { name: "Turn off single sign-on" })).toBeInTheDocument();
  await waitFor(() => expect(calls.filter((c) => c.method === "GET" && c.path === "/api/workspace/sso")).toHaveLength(2));
});

test("the server's 422 details land next to their fields, list items named", async () => {
  renderSso({
    "GET /api/workspace/sso": stored,
    "PUT /api/workspace/sso": {
      status: 422,
      body: {
        error: "invalid single sign-on settings",
        details: [
          { field: "issuer", message: "discovery failed: connection refused" },
          { field: "allowed_email_domains[0]", message: "must be a domain name" },
          { field: "group_mappings[0].project_id", message: "no such project" },
        ],
      },
    },
  });
  await userEvent.type(await screen.findByLabelText("Client secret"), "again");
  await userEvent.click(screen.getByRole("button", { name: "Save" }));
  const issuer = screen.getByLabelText("Issuer URL");
  await waitFor(() => expect(issuer).toHaveAttribute("aria-invalid", "true"));
  expect(issuer).toHaveAccessibleDescription(/discovery failed: connection refused/);
  expect(screen.getByLabelText("Allowed email domains")).toHaveAccessibleDescription(/“example.com”: must be a domain name/);
  expect(screen.getByLabelText("Project, row 1")).toHaveAccessibleDescription("no such project");
  expect(screen.getByText("Check the fields marked above.")).toBeInTheDocument();
});

test("test connection: what the provider answered, then a failure's reason", async () => {
  let fail = false;
  const { calls } = renderSso({
    "GET /api/workspace/sso": off,
    "POST /api/workspace/sso/test": () =>
      fail
        ? {
            status: 422,
            body: {
              error: "issuer: the provider's discovery document or keys cannot be fetched, or name another issuer",
              details: [{ field: "issuer", message: 'discovery failed: oidc: issuer did not match the issuer returned by provider, expected "https://idp.example.com" got "https://other.example.com"' }],
            },
          }
        : discovery,
  });
  await userEvent.type(await screen.findByLabelText("Issuer URL"), "https://idp.example.com/");
  await userEvent.click(screen.getByRole("button", { name: "Test connection" }));
  const ok = await screen.findByText("The provider answered.");
  const notice = ok.closest("[role=status]") as HTMLElement;
  expect(within(notice).getByText("https://idp.example.com/authorize")).toBeInTheDocument();
  expect(within(notice).getByText("https://idp.example.com/token")).toBeInTheDocument();
  expect(within(notice).getByText("UserInfo endpoint").nextElementSibling).toHaveTextContent("none");
  expect(within(notice).getByText("Signing keys").nextElementSibling).toHaveTextContent("2");
  expect(calls.find((c) => c.method === "POST")?.body).toEqual({ issuer: "https://idp.example.com/" });
  expect(await accessibilityProblems()).toEqual([]);

  // Editing the issuer drops the old answer.
  fail = true;
  await userEvent.type(screen.getByLabelText("Issuer URL"), "x");
  expect(screen.queryByText("The provider answered.")).not.toBeInTheDocument();
  await userEvent.click(screen.getByRole("button", { name: "Test connection" }));
  const alert = await screen.findByText(/The connection test failed/);
  const banner = alert.closest("[role=alert]") as HTMLElement;
  expect(banner).toHaveTextContent("cannot be fetched, or name another issuer");
  expect(banner).toHaveTextContent('expected "https://idp.example.com" got "https://other.example.com"');
  expect(calls.some((c) => c.method === "PUT")).toBe(false);
});

test("turning single sign-on off asks first, then sends DELETE and shows the empty form", async () => {
  let on = true;
  const { calls } = renderSso({
    "GET /api/workspace/sso": () => (on ? stored : off),
    "DELETE /api/workspace/sso": () => {
      on = false;
      return { status: 204 };
    },
  });
  await userEvent.click(await screen.findByRole("button", { name: "Turn off single sign-on" }));
  const dialog = screen.getByRole("dialog", { name: "Turn off single sign-on?" });
  expect(dialog).toHaveTextContent("Users keep their accounts");
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);
  await userEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
  expect(calls.some((c) => c.method === "DELETE")).toBe(false);

  await userEvent.click(screen.getByRole("button", { name: "Turn off single sign-on" }));
  await userEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Turn off" }));
  expect(await screen.findByText(/Turned off. Everyone signs in with a password again/)).toBeInTheDocument();
  expect(calls.filter((c) => c.method === "DELETE").map((c) => c.path)).toEqual(["/api/workspace/sso"]);
  expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
  expect(screen.getByText(/Single sign-on is off/)).toBeInTheDocument();
  expect(screen.getByLabelText("Issuer URL")).toHaveValue("");
  expect(screen.queryByRole("button", { name: "Turn off single sign-on" })).not.toBeInTheDocument();
});

test("a non-admin reads a permission message", async () => {
  renderSso({ "GET /api/workspace/sso": { status: 403, body: { error: "workspace admins only" } } });
  expect(await screen.findByRole("alert")).toHaveTextContent("You do not have permission to manage single sign-on.");
  expect(screen.queryByLabelText("Issuer URL")).not.toBeInTheDocument();
});

test("validateSso and ssoBody: a blank groups claim is left to the server, a new secret is asked for plainly", () => {
  const form = { ...ssoFormFrom(null), issuer: "https://idp.example.com?x=1", groups_claim: " " };
  expect(validateSso(form, false)).toMatchObject({
    issuer: "The issuer has no query (?…) or fragment (#…).",
    client_id: expect.any(String),
    client_secret: "Enter the client secret the provider gave this application.",
  });
  expect(ssoBody(form)).not.toHaveProperty("groups_claim");
  expect(ssoBody(form).scopes).toEqual(["openid", "email", "profile"]);
});
