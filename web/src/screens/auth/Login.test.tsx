import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { ApiError } from "../../api/client";
import { accessibilityProblems } from "../../test/axe";
import { renderScreen } from "../../test/render";
import { Login, loginMessage, ssoLoginHref } from "./Login";

const workspace = { workspace_name: "Acme", is_setup_complete: true };

test("lockout message names the minutes left and the time it ends", () => {
  const now = new Date("2026-11-22T10:00:00Z");
  const msg = loginMessage(new ApiError(429, { error: "locked", retry_after_seconds: 301 }), now);
  expect(msg).toMatch(/try again in 6 minutes/);
});

test("a wrong password shows the attempts left, and the request carries the CSRF header", async () => {
  const { calls } = renderScreen(<Login />, {
    url: "/login",
    routes: {
      "GET /api/auth/workspace": workspace,
      "POST /api/auth/login": { status: 401, body: { error: "invalid email or password", attempts_remaining: 3 } },
    },
  });
  expect(await screen.findByRole("heading", { name: "Sign in to Acme" })).toBeInTheDocument();
  await userEvent.type(screen.getByLabelText("Email"), "a@example.com");
  await userEvent.type(screen.getByLabelText("Password"), "wrong-password");
  await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
  expect(await screen.findByRole("alert")).toHaveTextContent("3 attempts left");
  const login = calls.find((c) => c.path === "/api/auth/login");
  expect(login?.body).toEqual({ email: "a@example.com", password: "wrong-password" });
  expect(login?.headers.get("X-Service-Request")).toBe("true");
});

test("a successful sign-in follows ?next", async () => {
  renderScreen(<Login />, {
    url: "/login?next=/projects/p/envs/e/flags",
    pattern: "/login",
    routes: {
      "GET /api/auth/workspace": workspace,
      "POST /api/auth/login": { id: 1, email: "a@example.com", name: "A", role: "admin", workspace_name: "Acme", is_setup_complete: true },
    },
  });
  await userEvent.type(await screen.findByLabelText("Email"), "a@example.com");
  await userEvent.type(screen.getByLabelText("Password"), "right-password");
  await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
  await waitFor(() => expect(screen.getByTestId("navigated")).toBeInTheDocument());
});

const ssoOff = { enabled: false, password_login: "enabled", login_url: "" };
const ssoOn = { enabled: true, password_login: "enabled", login_url: "/api/auth/oidc/login" };
const adminsOnly = { ...ssoOn, password_login: "admins_only" };

test("with single sign-on off the page is the password form alone", async () => {
  renderScreen(<Login />, {
    url: "/login",
    routes: { "GET /api/auth/workspace": workspace, "GET /api/auth/sso": ssoOff },
  });
  expect(await screen.findByLabelText("Email")).toBeInTheDocument();
  expect(screen.getByLabelText("Password")).toBeInTheDocument();
  expect(screen.getByRole("button", { name: "Sign in" })).toHaveClass("btn-primary");
  expect(screen.queryByRole("link", { name: "Sign in with SSO" })).not.toBeInTheDocument();
  expect(screen.queryByRole("button", { name: "Administrators: sign in with a password" })).not.toBeInTheDocument();
});

test("with single sign-on on, a plain link to login_url comes first and the password form stays", async () => {
  const { calls } = renderScreen(<Login />, {
    url: "/login",
    routes: { "GET /api/auth/workspace": workspace, "GET /api/auth/sso": ssoOn },
  });
  const link = await screen.findByRole("link", { name: "Sign in with SSO" });
  expect(link).toHaveAttribute("href", "/api/auth/oidc/login");
  expect(link).toHaveClass("btn-primary");
  expect(screen.getByLabelText("Email")).toBeInTheDocument();
  expect(screen.getByRole("button", { name: "Sign in" })).toBeInTheDocument();
  // The sign-in itself is the browser's navigation, never a fetch.
  expect(calls.map((c) => `${c.method} ${c.path}`).sort()).toEqual(["GET /api/auth/sso", "GET /api/auth/workspace"]);
  expect(await accessibilityProblems()).toEqual([]);
});

test.each([
  ["/login?next=%2Fprojects%2Fp%2Fenvs%2Fe%2Fflags%3Fq%3Da%26b", "/api/auth/oidc/login?redirect=%2Fprojects%2Fp%2Fenvs%2Fe%2Fflags%3Fq%3Da%26b"],
  ["/login?next=%2F%2Fevil.example.com%2Fx", "/api/auth/oidc/login"],
  ["/login?next=%2F%5Cevil.example.com", "/api/auth/oidc/login"],
  ["/login?next=https%3A%2F%2Fevil.example.com%2F", "/api/auth/oidc/login"],
  ["/login?next=", "/api/auth/oidc/login"],
])("the SSO link carries ?next only when it is a same-origin path: %s", async (url, href) => {
  renderScreen(<Login />, {
    url,
    pattern: "/login",
    routes: { "GET /api/auth/workspace": workspace, "GET /api/auth/sso": ssoOn },
  });
  expect(await screen.findByRole("link", { name: "Sign in with SSO" })).toHaveAttribute("href", href);
});

test("admins_only hides the password form behind a disclosure, and a refused non-admin is told to use SSO", async () => {
  const { calls } = renderScreen(<Login />, {
    url: "/login",
    routes: {
      "GET /api/auth/workspace": workspace,
      "GET /api/auth/sso": adminsOnly,
      "POST /api/auth/login": { status: 403, body: { error: "single sign-on is required", code: "SSO_REQUIRED" } },
    },
  });
  expect(await screen.findByRole("link", { name: "Sign in with SSO" })).toBeInTheDocument();
  expect(screen.queryByLabelText("Email")).not.toBeInTheDocument();
  expect(screen.queryByLabelText("Password")).not.toBeInTheDocument();
  const disclose = screen.getByRole("button", { name: "Administrators: sign in with a password" });
  expect(disclose).toHaveAttribute("aria-expanded", "false");
  expect(await accessibilityProblems()).toEqual([]);

  await userEvent.click(disclose);
  expect(disclose).toHaveAttribute("aria-expanded", "true");
  expect(disclose).toHaveAttribute("aria-controls", screen.getByLabelText("Email").closest("form")!.id);
  await userEvent.type(screen.getByLabelText("Email"), "bob@example.com");
  await userEvent.type(screen.getByLabelText("Password"), "right-password");
  await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
  expect(await screen.findByRole("alert")).toHaveTextContent("Your workspace requires single sign-on. Use “Sign in with SSO”.");
  expect(calls.find((c) => c.path === "/api/auth/login")?.body).toEqual({ email: "bob@example.com", password: "right-password" });
  expect(await accessibilityProblems()).toEqual([]);
});

test.each([
  ["sso_state", "The sign-in took too long or was started elsewhere. Try again."],
  ["sso_token", "The identity provider's answer could not be verified. Try again; if it keeps failing, ask a workspace admin."],
  ["sso_domain", "Your email domain is not allowed to sign in here."],
  ["sso_not_provisioned", "You have no account here yet, and accounts are not created automatically. Ask a workspace admin."],
  ["sso_deactivated", "Your account is deactivated. Ask a workspace admin."],
  ["sso_something_new", "Single sign-on did not complete. Try again; if it keeps failing, ask a workspace admin."],
])("?error=%s reads as a clear message", async (code, message) => {
  renderScreen(<Login />, {
    url: `/login?error=${code}`,
    pattern: "/login",
    routes: { "GET /api/auth/workspace": workspace, "GET /api/auth/sso": ssoOn },
  });
  expect(await screen.findByRole("alert")).toHaveTextContent(message);
  expect(screen.getByRole("link", { name: "Sign in with SSO" })).toBeInTheDocument();
});

test("ssoLoginHref keeps a query login_url intact", () => {
  expect(ssoLoginHref("/api/auth/oidc/login?x=1", "/flags")).toBe("/api/auth/oidc/login?x=1&redirect=%2Fflags");
  expect(ssoLoginHref("/api/auth/oidc/login", null)).toBe("/api/auth/oidc/login");
});
