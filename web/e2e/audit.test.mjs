// End-to-end: the workspace audit trail screen against the real server and
// database, in Debian's headless Chromium. The admin changes a flag in the
// dashboard, finds the entry, filters, opens its diff, downloads the export,
// verifies the chain and follows the History links of a flag, an SDK key,
// an environment and a user; a project admin reads the trail too, and a
// viewer is told they may not. The screenshot lands in e2e/artifacts/.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { accessibility, launchBrowser } from "./browser.mjs";
import { startServer } from "./server.mjs";

const artifacts = path.join(path.dirname(fileURLToPath(import.meta.url)), "artifacts");
mkdirSync(artifacts, { recursive: true });

const ADMIN = { name: "Ada Admin", email: "ada@example.com", password: "correct horse battery" };
const PAT = { name: "Pat Project", email: "pat@example.com", password: "project admin secret", role: "editor" };
const VIC = { name: "Vic Viewer", email: "vic@example.com", password: "viewer only secret", role: "viewer" };
const FLAG = "checkout-redesign";
const TIMEOUT = 10_000;

let server;
let browser;
let adminCookie;
let project;
let env;
// Every page's Content-Security-Policy reports (the dashboard must run under it).
const violations = [];

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  const res = await fetch(server.url + "/api/auth/setup", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ ...ADMIN, workspace_name: "Acme" }),
  });
  assert.equal(res.status, 200, await res.text());
  adminCookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  [project] = await api("GET", "/api/projects");
  env = project.environments.find((e) => e.name === "Development") ?? project.environments[0];
  await api("POST", `/api/environments/${env.id}/flags`, { key: FLAG, is_enabled: false, description: "The new one-page checkout" });
  for (const [who, role] of [[PAT, "admin"], [VIC, "viewer"]]) {
    const user = await api("POST", "/api/users", who);
    await api("POST", `/api/projects/${project.id}/members`, { user_id: user.id, role });
  }
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// api calls the server as the admin, the way a script would.
async function api(method, route, body) {
  const headers = { Cookie: adminCookie, "X-Service-Request": "true" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(server.url + route, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${route}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function newPage() {
  const context = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  context.setDefaultTimeout(TIMEOUT);
  const page = await context.newPage();
  page.on("pageerror", (err) => console.error("page error:", err.message));
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  return page;
}

async function signIn(page, who) {
  await page.goto("/login");
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/flags$/);
}

// eventually polls fn until it returns a truthy value.
async function eventually(fn, what, timeoutMs = TIMEOUT) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline) assert.fail(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function query(page) {
  return Object.fromEntries(new URL(page.url()).searchParams);
}

// rows are the trail's entry rows (each has a Details button).
function rows(page) {
  return page.getByRole("row").filter({ has: page.getByRole("button", { name: /^Details of entry/ }) });
}

test("the admin finds a flag change in the audit trail, filters, reads its diff, exports and verifies", async (root) => {
  // Each step builds on the one before: after a failure the rest only add noise.
  let failed = false;
  const t = {
    test: (name, fn) =>
      root.test(name, { skip: failed && "an earlier step failed" }, async () => {
        try {
          await fn();
        } catch (err) {
          failed = true;
          throw err;
        }
      }),
  };
  const page = await newPage();
  const flagsPath = `/projects/${project.id}/envs/${env.id}/flags`;

  await t.test("turn a flag on in the dashboard", async () => {
    await signIn(page, ADMIN);
    await page.goto(flagsPath);
    const toggle = page.getByRole("switch", { name: `Enable ${FLAG}` });
    await toggle.click();
    await eventually(async () => (await toggle.getAttribute("aria-checked")) === "true", "the flag is on");
  });

  await t.test("the navigation leads to the trail, which shows the change", async () => {
    await page.getByRole("link", { name: "Audit trail" }).click();
    await page.waitForURL(/\/audit$/);
    await page.getByRole("heading", { name: "Audit trail", level: 1 }).waitFor();
    const entry = rows(page).filter({ hasText: "flag.updated" }).filter({ hasText: FLAG }).first();
    await entry.waitFor();
    assert.match(await entry.textContent(), new RegExp(ADMIN.email));
    assert.match(await entry.textContent(), /Development/);
  });

  await t.test("filters go to the address, survive a reload and narrow the list", async () => {
    const form = page.getByRole("search", { name: "Filter the audit trail" });
    await form.getByLabel("Resource type").selectOption("flag");
    await form.getByLabel("Resource ID").fill(FLAG);
    await form.getByLabel("Action").fill("flag.updated");
    await form.getByLabel("Actor").fill(ADMIN.email);
    await form.getByRole("button", { name: "Apply filters" }).click();
    await eventually(() => query(page).action === "flag.updated", "the filters in the address");
    assert.deepEqual(query(page), { actor: ADMIN.email, resource_type: "flag", resource_id: FLAG, action: "flag.updated" });
    await page.reload();
    await rows(page).first().waitFor();
    assert.equal(await form.getByLabel("Resource ID").inputValue(), FLAG);
    assert.equal(await form.getByLabel("Resource type").inputValue(), "flag");
    const texts = await rows(page).allTextContents();
    assert.ok(texts.length >= 1, "at least the toggle");
    for (const text of texts) {
      assert.match(text, /flag\.updated/);
      assert.match(text, new RegExp(FLAG));
    }
    // A filter that matches nothing says so.
    await form.getByLabel("Action").fill("flag.deleted");
    await form.getByRole("button", { name: "Apply filters" }).click();
    await page.getByText("Nothing matches these filters.").waitFor();
    await page.goBack();
    await rows(page).first().waitFor();
    assert.equal(query(page).action, "flag.updated");
  });

  await t.test("an entry opens to its diff, its actor and its request", async () => {
    const entry = rows(page).first();
    const details = entry.getByRole("button", { name: /^Details of entry/ });
    await details.click();
    assert.equal(await details.getAttribute("aria-expanded"), "true");
    const panel = page.locator(`#${await details.getAttribute("aria-controls")}`);
    const changed = panel.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /^is_enabled/ }) });
    await changed.waitFor();
    assert.match(await changed.textContent(), /false.*true/s);
    const facts = await panel.textContent();
    assert.match(facts, /Actor kinduser/);
    assert.match(facts, new RegExp(`Email${ADMIN.email}`));
    assert.match(facts, /IP address127\.0\.0\.1/);
    assert.match(facts, /User agentMozilla\/5\.0 .*Chrome/);
    assert.match(facts, /Request ID\S+/);
    assert.deepEqual(await accessibility(page), [], "audit trail accessibility, an entry open");
    await page.screenshot({ path: path.join(artifacts, "23-audit-trail.png"), fullPage: true });
  });

  await t.test("the export downloads the filtered entries as NDJSON", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download NDJSON" }).click()]);
    assert.equal(download.suggestedFilename(), "audit-trail.ndjson");
    const lines = readFileSync(await download.path(), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    assert.ok(lines.length >= 1, "the toggle is exported");
    for (const e of lines) {
      assert.equal(e.action, "flag.updated");
      assert.equal(e.resource.id, FLAG);
      assert.equal(e.actor.email, ADMIN.email);
    }
    assert.deepEqual(lines.map((e) => e.id), [...lines.map((e) => e.id)].sort((a, b) => a - b), "in id order");
  });

  await t.test("Verify chain checks the sealed entries", async () => {
    // Entries are sealed seconds after their commit.
    await eventually(
      async () => (await api("GET", `/api/audit?resource_type=flag&resource_id=${FLAG}&action=flag.updated`)).items.every((e) => e.hash),
      "the toggle sealed",
      30_000,
    );
    await page.getByRole("button", { name: "Verify chain" }).click();
    const verdict = page.locator(".audit-verdict");
    await verdict.waitFor();
    const text = await verdict.textContent();
    assert.match(text, /ResultThe chain holds/);
    assert.match(text, /First bad entrynone/);
    assert.ok(Number(/Entries checked(\d+)/.exec(text)?.[1]) >= 1, text);
  });

  await t.test("a flag's History link opens the trail filtered to that flag in its environment", async () => {
    await page.goto(`${flagsPath}/${FLAG}`);
    await page.getByRole("link", { name: `History of ${FLAG}` }).click();
    await page.waitForURL(/\/audit\?/);
    assert.deepEqual(query(page), { environment_id: env.id, resource_type: "flag", resource_id: FLAG });
    await page.getByText(new RegExp(`The history of flag ${FLAG} in ${env.name}`)).waitFor();
    await rows(page).filter({ hasText: "flag.updated" }).first().waitFor();
    for (const text of await rows(page).allTextContents()) assert.match(text, new RegExp(FLAG));
    // And back to everything.
    await page.getByRole("link", { name: "Show every entry" }).click();
    await page.waitForURL(/\/audit$/);
  });

  await t.test("an SDK key, an environment and a user link to their histories", async () => {
    await page.goto(`/projects/${project.id}/envs/${env.id}/keys`);
    await page.getByLabel("Key name").fill("checkout service");
    await page.getByRole("button", { name: /^Create .*key$/ }).click();
    await page.getByTestId("secret").waitFor();
    const [key] = (await api("GET", `/api/projects/${project.id}/keys`)).filter((k) => k.name === "checkout service");
    await page.getByRole("link", { name: "History of checkout service" }).click();
    await page.waitForURL(/\/audit\?/);
    assert.deepEqual(query(page), { resource_type: "sdk_key", resource_id: String(key.id) });
    await page.getByText(/The history of sdk key/).waitFor();
    await page.getByText(/entr(y|ies)$|Nothing matches these filters\./).first().waitFor();

    await page.goto(`/projects/${project.id}/envs/${env.id}/settings`);
    await page.getByRole("link", { name: `History of ${env.name}` }).click();
    await page.waitForURL(/\/audit\?/);
    assert.deepEqual(query(page), { resource_type: "environment", resource_id: env.id });

    const users = await api("GET", "/api/users");
    const pat = users.find((u) => u.email === PAT.email);
    await page.goto("/admin/users");
    await page.getByRole("link", { name: `History of ${PAT.email}` }).click();
    await page.waitForURL(/\/audit\?/);
    assert.deepEqual(query(page), { resource_type: "user", resource_id: String(pat.id) });
  });

  assert.deepEqual(violations, [], "no Content-Security-Policy violation");
  await page.context().close();
});

test("a project admin reads their project's entries; a viewer may not", async () => {
  const pat = await newPage();
  await signIn(pat, PAT);
  await pat.getByRole("link", { name: "Audit trail" }).click();
  await pat.waitForURL(/\/audit$/);
  await rows(pat).filter({ hasText: FLAG }).first().waitFor();
  await pat.getByText(/Every change to the projects you administer/).waitFor();
  assert.equal(await pat.getByRole("button", { name: "Verify chain" }).count(), 0, "verification is for workspace admins");
  // The flag's History link is theirs too.
  await pat.goto(`/projects/${project.id}/envs/${env.id}/flags/${FLAG}`);
  await pat.getByRole("link", { name: `History of ${FLAG}` }).waitFor();
  await pat.context().close();

  const vic = await newPage();
  await signIn(vic, VIC);
  // The dashboard asks the server whether Vic may read the trail (here, of this project).
  const asked = vic.waitForResponse((r) => new URL(r.url()).pathname === "/api/audit" && r.url().includes("project_id="));
  await vic.goto(`/projects/${project.id}/envs/${env.id}/flags/${FLAG}`);
  assert.equal((await asked).status(), 403);
  await vic.getByRole("button", { name: "Archive" }).waitFor();
  assert.equal(await vic.getByRole("link", { name: "Audit trail" }).count(), 0, "not in a viewer's navigation");
  assert.equal(await vic.getByRole("link", { name: `History of ${FLAG}` }).count(), 0, "no History link for a viewer");
  await vic.goto("/audit");
  await vic.getByRole("alert").filter({ hasText: "You do not have permission to read the audit trail" }).waitFor();
  await vic.context().close();
  assert.deepEqual(violations, [], "no Content-Security-Policy violation");
});
