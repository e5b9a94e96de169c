// End-to-end: the browser hardening of docs/security.md ("Browser
// hardening") in Debian's headless Chromium against the real server. The
// dashboard and the API reference run under the server's
// Content-Security-Policy without a single violation or console error, and
// a page of another origin cannot frame the dashboard.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, test } from "node:test";
import { launchBrowser } from "./browser.mjs";
import { startServer } from "./server.mjs";

const ADMIN = { email: "ada@example.com", password: "correct horse battery" };
const TIMEOUT = 10_000;

let server;
let browser;
// framer serves, from another port of this machine (so another origin), a
// page that frames the dashboard.
let framer;
let framerURL;

before(async () => {
  server = await startServer({ env: { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ADMIN_NAME: "Ada Admin" } });
  framer = http.createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(`<!doctype html><title>Framer</title><iframe id="target" src="${server.url}/login" width="800" height="600"></iframe>`);
  });
  await new Promise((r) => framer.listen(0, "127.0.0.1", r));
  framerURL = `http://127.0.0.1:${framer.address().port}/`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  framer?.close();
});

// expectedFailures are the API's answers that screens read as states, not
// failures: signed out (the session check before signing in) and single
// sign-on off. Chromium logs every such response as a console error
// ("Failed to load resource"); the test accounts for them response by
// response instead, and any other failed response is a problem.
const expectedFailures = ["GET /api/auth/me 401", "GET /api/workspace/sso 404"];

// watchedPage opens a page that records every console error, uncaught
// exception, failed response and Content-Security-Policy violation of every
// document it loads (the listener is installed before any of the page's own
// scripts).
async function watchedPage() {
  const context = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(TIMEOUT);
  const problems = [];
  await context.exposeBinding("__reportViolation", ({ frame }, v) => {
    problems.push(`CSP violation on ${frame.url()}: ${v.directive} blocked ${v.blocked} (${v.source}:${v.line}) ${v.sample}`);
  });
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      // eslint-disable-next-line no-undef
      __reportViolation({ directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber, sample: e.sample });
    });
  });
  const page = await context.newPage();
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    if (/^Failed to load resource: the server responded with a status of \d+/.test(msg.text())) return; // the response is checked below
    problems.push(`console error on ${page.url()}: ${msg.text()}`);
  });
  page.on("response", (res) => {
    if (res.status() < 400) return;
    const url = new URL(res.url());
    const what = `${res.request().method()} ${url.pathname} ${res.status()}`;
    if (url.origin !== server.url || !expectedFailures.includes(what)) problems.push(`failed response on ${page.url()}: ${what}`);
  });
  page.on("pageerror", (err) => problems.push(`page error on ${page.url()}: ${err.message}`));
  return { page, problems };
}

async function api(page, method, url, body) {
  const res = await page.request.fetch(url, {
    method,
    data: body === undefined ? undefined : JSON.stringify(body),
    headers: { "Content-Type": "application/json", "X-Service-Request": "true" },
  });
  const text = await res.text();
  assert.ok(res.ok(), `${method} ${url}: ${res.status()} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

// settled waits until the page has stopped fetching (a screen's lazy chunk,
// its data), so that whatever it renders has rendered.
async function settled(page) {
  await page.waitForLoadState("networkidle").catch(() => undefined);
}

test("the dashboard's pages carry the hardening headers", async () => {
  for (const path of ["/", "/login", "/api/docs"]) {
    const res = await fetch(server.url + path);
    assert.equal(res.status, 200, path);
    const csp = res.headers.get("content-security-policy") ?? "";
    assert.match(csp, /frame-ancestors 'none'/, `${path}: ${csp}`);
    assert.match(csp, /script-src 'self'(;|$)/, `${path}: ${csp}`);
    assert.match(csp, /default-src 'self'/, `${path}: ${csp}`);
    assert.equal(res.headers.get("x-frame-options"), "DENY", path);
    assert.equal(res.headers.get("referrer-policy"), "same-origin", path);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
  }
  for (const path of ["/health", "/api/openapi.json", "/api/projects", "/stream"]) {
    const res = await fetch(server.url + path);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
  }
});

test("the dashboard and the API reference run under the policy without a violation", async () => {
  const { page, problems } = await watchedPage();

  await page.goto("/");
  await page.waitForURL(/\/login/);
  await settled(page);
  await page.getByLabel("Email").fill(ADMIN.email);
  await page.getByLabel("Password").fill(ADMIN.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/flags$/);

  const [project] = await api(page, "GET", "/api/projects");
  const env = project.environments.find((e) => e.name === "Development");
  const flags = `/api/environments/${env.id}/flags`;
  await api(page, "POST", flags, {
    key: "checkout-redesign", is_enabled: true, flag_type: "string", default_value: "classic",
    variants: [{ value: "classic", weight: 50 }, { value: "one-page", weight: 50 }],
    rules: [{ attribute: "country", operator: "equals", values: ["NL"], variant: "one-page" }],
  });

  // Every kind of screen: lists, the flag editor with its rule builder,
  // charts (uPlot), forms, the workspace's admin screens.
  const base = `/projects/${project.id}/envs/${env.id}`;
  const screens = [
    `${base}/flags`, `${base}/flags/checkout-redesign`, `${base}/flags/new`, `${base}/flags/checkout-redesign/releases/new`,
    `${base}/releases`, `${base}/diff`, `${base}/segments`, `${base}/change-requests`, `${base}/schedules`,
    `${base}/experiments`, `${base}/impressions`, `${base}/audit`,
    `${base}/integrations`, `${base}/keys`, `${base}/members`, `${base}/settings`,
    "/account/tokens", "/admin/users", "/admin/sso", "/admin/scim", "/audit",
  ];
  for (const screen of screens) {
    await page.goto(screen);
    await page.locator("main").first().waitFor();
    await settled(page);
  }

  // The flag list reached from the dashboard's own navigation, then the API
  // reference: Swagger UI renders the whole document, one operation opened.
  await page.goto(`${base}/flags`);
  await page.getByRole("link", { name: "checkout-redesign" }).first().waitFor();
  await page.goto("/api/docs");
  const summary = page.getByText("Evaluate every flag the key may see (OFREP bulk)").first();
  await summary.waitFor();
  await settled(page);
  await summary.click();
  await page.getByText("answers 304 without evaluating anything").first().waitFor();
  // "Try it out" on listProjects runs it with the session and renders the
  // response, highlighted.
  const list = page.locator(".opblock").filter({ hasText: "List projects" }).first();
  await list.locator(".opblock-summary").click();
  await list.getByRole("button", { name: "Try it out" }).click();
  await list.getByRole("button", { name: "Execute" }).click();
  await list.locator(".responses-wrapper .live-responses-table").waitFor();
  await list.getByText(project.id).first().waitFor();
  // The schemas at the end of the document, one expanded.
  const schemas = page.locator("section.models");
  await schemas.scrollIntoViewIfNeeded();
  await schemas.locator("button.models-control").click();
  await schemas.locator(".model-container").first().locator("button").first().click();
  await settled(page);
  assert.deepEqual(problems, [], "the dashboard and the API reference ran under the policy");

  // The watch works, and the policy holds: a script the page writes itself
  // is refused, and reported.
  const ran = await page.evaluate(() => {
    const s = document.createElement("script");
    s.textContent = "window.__inlineRan = true";
    document.body.append(s);
    return new Promise((r) => setTimeout(() => r(window.__inlineRan === true), 200));
  });
  assert.equal(ran, false, "an inline script ran");
  await expect(() => problems.some((p) => p.includes("CSP violation") && p.includes("script-src")), "the inline script reported as a violation");
  await page.context().close();
});

async function expect(fn, what) {
  const deadline = Date.now() + TIMEOUT;
  while (!fn()) {
    if (Date.now() > deadline) assert.fail(what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("a page of another origin cannot frame the dashboard", async () => {
  const { page, problems } = await watchedPage();
  const framed = [];
  page.on("response", (res) => {
    if (res.url().startsWith(server.url)) framed.push(res);
  });
  await page.goto(framerURL);
  await page.locator("#target").waitFor();
  // The dashboard answered (with its headers), and the browser refused to
  // show it: the frame holds an error page, not the dashboard's document.
  const deadline = Date.now() + TIMEOUT;
  while (!framed.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(framed.length > 0, "the frame requested the dashboard");
  assert.match(framed[0].headers()["content-security-policy"] ?? "", /frame-ancestors 'none'/);
  await settled(page);
  const frame = page.frames().find((f) => f !== page.mainFrame());
  assert.ok(frame, "the page has its frame");
  assert.ok(!frame.url().startsWith(server.url), `the frame stays off the dashboard: ${frame.url()}`);
  const title = await frame.evaluate(() => document.title).catch(() => "");
  assert.notEqual(title, "Switchyard", "the frame shows no dashboard");
  assert.equal(await frame.locator("#root").count().catch(() => 0), 0, "the dashboard's app did not mount in the frame");
  assert.ok(
    problems.some((p) => p.includes("frame-ancestors")),
    `the browser reports the refusal as a frame-ancestors violation:\n${problems.join("\n")}`,
  );
  await page.context().close();
});
