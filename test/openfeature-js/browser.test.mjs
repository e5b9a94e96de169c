// The browser example (docs/examples/web: @openfeature/web-sdk with
// @openfeature/ofrep-web-provider, versions pinned in its package.json) in
// Debian's headless Chromium through playwright-core, against a real
// Switchyard on another origin (so CORS is exercised for real), with a client
// key.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { api, arrange, eventually, startServer } from './harness.mjs';

const example = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/examples/web');
const TIMEOUT = 10_000;

let server;
let world;
let page0; // the example's static server
let exampleUrl;
let browser;

before(async () => {
  // Bundle the page from its sources so that the test never runs a stale
  // dist/app.js (`npm ci` in docs/examples/web installs esbuild).
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: example, stdio: ['ignore', 'ignore', 'inherit'] });
  const { serve } = await import(path.join(example, 'serve.mjs'));
  page0 = await serve({ port: 0 });
  exampleUrl = `http://127.0.0.1:${page0.address().port}/`;
  server = await startServer();
  world = await arrange(server.url);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
});

after(async () => {
  await browser?.close();
  await server?.stop();
  page0?.close();
});

// open loads the example page in a fresh browser context (no cached flags)
// with the given query parameters, records the page's requests to
// Switchyard, and waits until the provider is ready.
async function open(params) {
  const context = await browser.newContext();
  context.setDefaultTimeout(TIMEOUT);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  const requests = []; // {path, search, method, at}
  const responses = []; // {path, status}
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin === server.url) requests.push({ path: u.pathname, search: u.search, method: r.method(), at: Date.now() });
  });
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (u.origin === server.url) responses.push({ path: u.pathname, status: r.status() });
  });
  const url = new URL(exampleUrl);
  url.search = new URLSearchParams({ base: server.url, key: world.clientKey.key, env: world.env, ...params }).toString();
  await page.goto(url.toString());
  await page.waitForSelector('body[data-ready="true"]');
  assert.deepEqual(errors, [], 'page errors');
  return {
    page,
    requests,
    responses,
    bulk: () => requests.filter((r) => r.method === 'POST' && r.path === '/ofrep/v1/evaluate/flags'),
    streams: () => requests.filter((r) => r.path === '/ofrep/v1/events'),
    value: () => page.locator('#value').textContent(),
    text: (id) => page.locator(`#${id}`).textContent(),
    close: () => context.close(),
  };
}

async function patchFlag(key, body) {
  const res = await api(server.url, 'PATCH', `/api/environments/${world.env}/flags/${key}`, { bearer: world.admin, body });
  assert.equal(res.status, 200, `patch ${key}: ${JSON.stringify(res.body)}`);
}

test('the page reads the right values for two users, for every flag type', async () => {
  const cases = [
    [{ flag: 'greeting', type: 'string', user: 'ada', 'ctx.country': 'DE', default: 'x' }, 'hallo', 'TARGETING_MATCH'],
    [{ flag: 'greeting', type: 'string', user: 'bob', 'ctx.country': 'FR', default: 'x' }, 'hello', 'DEFAULT'],
    [{ flag: 'beta', type: 'boolean', user: 'ada', 'ctx.plan': 'pro' }, 'true', 'TARGETING_MATCH'],
    [{ flag: 'beta', type: 'boolean', user: 'bob', 'ctx.plan': 'free', default: 'true' }, 'false', 'SPLIT'],
    [{ flag: 'limit', type: 'number', user: 'ada', 'ctx.plan': 'pro' }, '100', 'TARGETING_MATCH'],
    [{ flag: 'limit', type: 'number', user: 'bob', 'ctx.plan': 'free' }, '10', 'DEFAULT'],
    [{ flag: 'layout', type: 'object', user: 'bob' }, '{"cols":3,"dense":false}', 'DEFAULT'],
  ];
  for (const [params, want, reason] of cases) {
    const p = await open(params);
    const what = `${params.flag} for ${params.user}`;
    assert.equal(await p.value(), want, what);
    assert.equal(await p.text('reason'), reason, `${what}: reason`);
    assert.equal(await p.text('error'), '', `${what}: error`);
    await p.close();
  }
});

test('a flag that is not client-side, or missing, shows the code default with FLAG_NOT_FOUND', async () => {
  for (const flag of ['hidden', 'no-such-flag']) {
    const p = await open({ flag, type: 'boolean', default: 'true' });
    assert.equal(await p.value(), 'true', flag);
    assert.match(await p.text('error'), /^FLAG_NOT_FOUND/, flag);
    await p.close();
  }
});

test('a flag whose result is null shows the code default', async () => {
  const p = await open({ flag: 'banner', type: 'string', user: 'bob', default: 'code default' });
  assert.equal(await p.value(), 'code default');
  // Unlike the Node provider, the web provider reports no error for it.
  assert.equal(await p.text('reason'), 'DEFAULT');
  assert.equal(await p.text('error'), '');
  await p.close();
});

test('a PATCH reaches the page through the event stream, with no polling', async () => {
  const p = await open({ flag: 'greeting', type: 'string', user: 'carol', 'ctx.country': 'FR', default: 'x' });
  assert.equal(await p.value(), 'hello');
  // The provider connects to the stream advertised in the bulk answer.
  await eventually(() => p.responses.some((r) => r.path === '/ofrep/v1/events' && r.status === 200), 'event stream open');
  assert.equal(p.bulk().length, 1, 'one bulk request (the initial one) before the change');
  const patchedAt = Date.now();
  await patchFlag('greeting', { default_value: 'servus' });
  await p.page.waitForFunction(() => document.getElementById('value').textContent === 'servus');
  const bulk = p.bulk();
  assert.equal(bulk[0].search, '', 'the initial request');
  const refetches = bulk.slice(1);
  assert.ok(refetches.length >= 1, 'a refetch after the change');
  for (const r of refetches) {
    assert.ok(r.at >= patchedAt, 'no bulk request between the initial one and the change');
    // flagConfigEtag comes from the refetchEvaluation event: the stream, not a timer, asked.
    assert.match(r.search, /flagConfigEtag=/, 'the refetch names the event that caused it');
  }
  assert.equal(p.streams().length, 1, 'one event stream');
  await p.close();
});

test('with the stream off, polling with ETag sees the change', async () => {
  await patchFlag('greeting', { default_value: 'hello' });
  const p = await open({ flag: 'greeting', type: 'string', user: 'dave', 'ctx.country': 'FR', default: 'x', mode: 'polling', poll: '300' });
  assert.equal(await p.value(), 'hello');
  assert.equal(await p.text('mode'), 'polling every 300 ms (with ETag)');
  // While nothing changes, each poll carries If-None-Match and gets a 304.
  await eventually(() => p.responses.filter((r) => r.path === '/ofrep/v1/evaluate/flags' && r.status === 304).length >= 2, 'two 304 polls');
  await patchFlag('greeting', { default_value: 'moin' });
  await p.page.waitForFunction(() => document.getElementById('value').textContent === 'moin');
  assert.equal(p.streams().length, 0, 'no event stream in polling mode');
  await p.close();
});

test('the client key cannot read /flags/snapshot from the page', async () => {
  const p = await open({ flag: 'greeting', type: 'string', user: 'eve' });
  const status = await p.page.evaluate(
    async ({ base, key }) => (await fetch(`${base}/flags/snapshot`, { headers: { Authorization: `Bearer ${key}` } })).status,
    { base: server.url, key: world.clientKey.key },
  );
  assert.equal(status, 403);
  await p.close();
});

test("the exposure hook's impressions arrive", async () => {
  const p = await open({ flag: 'greeting', type: 'string', user: 'frank', 'ctx.country': 'DE', default: 'x' });
  assert.equal(await p.value(), 'hallo');
  const items = await eventually(async () => {
    const res = await api(server.url, 'GET', `/api/environments/${world.env}/impressions?flag_key=greeting&user_id=frank`, { bearer: world.admin });
    assert.equal(res.status, 200);
    return res.body.items.length > 0 && res.body.items;
  }, 'impressions of frank');
  assert.deepEqual(
    items.map(({ flag_key, user_id, value }) => ({ flag_key, user_id, value })),
    items.map(() => ({ flag_key: 'greeting', user_id: 'frank', value: 'hallo' })),
  );
  assert.ok(p.requests.some((r) => r.method === 'POST' && r.path === `/api/environments/${world.env}/impressions`), 'sent by the page');
  await p.close();
});
