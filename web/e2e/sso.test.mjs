// End-to-end: single sign-on through a real OpenID Provider (zitadel/oidc's
// op package and its login page, bin/testop), then SCIM deactivation ending
// the browser's session. The dashboard is opened as http://localhost and the
// provider runs on http://127.0.0.1: two sites, so the provider's redirect
// back is a cross-site navigation, as with any real provider.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { accessibility, launchBrowser } from "./browser.mjs";
import { freePort, startServer } from "./server.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const artifacts = path.join(path.dirname(fileURLToPath(import.meta.url)), "artifacts");
const ADMIN = { name: "Ada Admin", email: "ada@example.com", password: "correct horse battery" };
const IVY = { subject: "ivy", email: "ivy@example.com", name: "Ivy Ito" };
const CLIENT = { id: "switchyard", secret: "e2e-client-secret" };
const TIMEOUT = 10_000;

let op;
let issuer;
let server;
let publicURL;
let browser;
let adminCookie;

before(async () => {
  const port = await freePort();
  publicURL = `http://localhost:${port}`;
  op = spawn(
    path.join(root, "bin/testop"),
    ["-client", `${CLIENT.id}:${CLIENT.secret}`, "-redirect", `${publicURL}/api/auth/oidc/callback`,
      "-user", `${IVY.subject}|${IVY.email}|${IVY.name}|eng`],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const [line] = await once(createInterface({ input: op.stdout }), "line");
  issuer = line.trim();
  server = await startServer({ port, env: { PUBLIC_URL: publicURL } });
  browser = await launchBrowser();
  adminCookie = await setUp();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  op?.kill("SIGTERM");
});

// api calls the server as the admin (or with another credential), the way
// a script would; mutations with the session cookie carry the CSRF header.
async function api(method, route, body, { cookie = adminCookie, bearer, type = "application/json" } = {}) {
  const headers = { "X-Service-Request": "true" };
  if (cookie && !bearer) headers.Cookie = cookie;
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  if (body !== undefined) headers["Content-Type"] = type;
  const res = await fetch(server.url + route, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

// setUp creates the first admin and points single sign-on at the provider,
// mapping the provider's "eng" group to editor in the default project.
async function setUp() {
  const res = await fetch(server.url + "/api/auth/setup", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(ADMIN),
  });
  assert.equal(res.status, 200, await res.text());
  const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const projects = await api("GET", "/api/projects", undefined, { cookie });
  const project = projects.body[0];
  const sso = await api("PUT", "/api/workspace/sso", {
    issuer,
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    group_mappings: [{ group: "eng", project_id: project.id, role: "editor" }],
  }, { cookie });
  assert.equal(sso.status, 200, JSON.stringify(sso.body));
  return cookie;
}

async function eventuallyValue(locator, want) {
  const deadline = Date.now() + TIMEOUT;
  while ((await locator.inputValue()) !== want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await locator.inputValue(), want);
}

async function signInThroughProvider(page) {
  await page.goto("/");
  await page.waitForURL(/\/login/);
  await page.getByRole("link", { name: "Sign in with SSO" }).click();
  // The provider's own login page.
  await page.waitForURL((u) => u.href.startsWith(issuer + "/login/"));
  await page.getByLabel("Username").fill(IVY.subject);
  await page.getByLabel("Password").fill("pw");
  await page.getByRole("button", { name: "Login" }).click();
}

test("the admin's single sign-on and SCIM screens, with test connection against the provider", async () => {
  const context = await browser.newContext({ baseURL: publicURL, viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(TIMEOUT);
  const page = await context.newPage();
  page.on("pageerror", (err) => console.error("page error:", err.message));
  await page.goto("/login");
  await page.getByRole("link", { name: "Sign in with SSO" }).waitFor();
  assert.deepEqual(await accessibility(page), [], "sign-in page with single sign-on");
  await page.screenshot({ path: path.join(artifacts, "sso-sign-in.png") });
  await page.getByLabel("Email").fill(ADMIN.email);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(/\/flags$/);

  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Single sign-on" }).click();
  await page.waitForURL(/\/admin\/sso$/);
  const issuerField = page.getByLabel("Issuer");
  await eventuallyValue(issuerField, issuer);
  await page.getByRole("button", { name: "Test connection" }).click();
  const answered = page.getByText("The provider answered.");
  await answered.waitFor();
  const notice = page.locator(".sso-discovery");
  assert.match(await notice.innerText(), new RegExp(`${issuer}/auth`), "the provider's authorization endpoint");
  assert.deepEqual(await accessibility(page), [], "single sign-on screen");
  await page.screenshot({ path: path.join(artifacts, "sso-settings.png"), fullPage: true });

  // A wrong address: the reason comes back, nothing is saved.
  await issuerField.fill("http://127.0.0.1:1");
  await page.getByRole("button", { name: "Test connection" }).click();
  await page.getByText(/discovery failed/).waitFor();
  assert.equal((await api("GET", "/api/workspace/sso")).body.issuer, issuer);

  await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "SCIM provisioning" }).click();
  await page.waitForURL(/\/admin\/scim$/);
  await page.getByText(`${publicURL}/scim/v2`).first().waitFor();
  assert.deepEqual(await accessibility(page), [], "SCIM screen");
  await page.screenshot({ path: path.join(artifacts, "sso-scim.png"), fullPage: true });
  await context.close();
});

test("sign in with SSO through the provider's login page, then a SCIM deactivation ends the session", async () => {
  const context = await browser.newContext({ baseURL: publicURL, viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(TIMEOUT);
  const page = await context.newPage();
  page.on("pageerror", (err) => console.error("page error:", err.message));

  await signInThroughProvider(page);
  await page.waitForURL(/\/flags$/);
  await page.getByRole("heading", { name: "Flags", exact: true }).waitFor();
  await page.screenshot({ path: path.join(artifacts, "sso-signed-in.png") });

  // The session cookie the callback set is the password sign-in's: HttpOnly
  // and SameSite=Strict, and it works after the cross-site redirect chain.
  const session = (await context.cookies()).find((c) => c.name === "lg_session");
  assert.ok(session, "no session cookie after the callback");
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, "Strict");
  const me = await page.evaluate(async () => (await fetch("/api/auth/me")).json());
  assert.equal(me.email, IVY.email);
  assert.equal(me.name, IVY.name);
  const users = await api("GET", "/api/users");
  const ivy = users.body.find((u) => u.email === IVY.email);
  assert.equal(ivy.sso_linked, true, "the provisioned user is linked to the provider");
  // The "eng" group's mapping made Ivy an editor of the default project.
  const projects = await api("GET", "/api/projects");
  const members = await api("GET", `/api/projects/${projects.body[0].id}/members`);
  assert.equal(members.body.find((m) => m.user_id === ivy.id)?.role, "editor", JSON.stringify(members.body));

  // The identity provider deactivates Ivy over SCIM, with Okta's request.
  const scim = await api("POST", "/api/workspace/scim-tokens", { name: "Okta" });
  assert.equal(scim.status, 201, JSON.stringify(scim.body));
  const found = await api("GET", `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${IVY.email}"`)}`, undefined, { bearer: scim.body.token });
  assert.equal(found.body.totalResults, 1, JSON.stringify(found.body));
  const patched = await api(
    "PATCH",
    `/scim/v2/Users/${found.body.Resources[0].id}`,
    { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "replace", value: { active: false } }] },
    { bearer: scim.body.token, type: "application/scim+json" },
  );
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.equal(patched.body.active, false);

  // Nobody touches the page: its live stream ends, and the dashboard finds
  // the session gone and shows the sign-in page.
  await page.waitForURL(/\/login/);
  assert.equal((await page.evaluate(async () => (await fetch("/api/auth/me")).status)), 401);

  // Signing in again through the provider is refused.
  await signInThroughProvider(page);
  await page.waitForURL(/\/login\?error=sso_deactivated/);
  await page.getByRole("alert").filter({ hasText: "deactivated" }).waitFor();
  await context.close();
});
