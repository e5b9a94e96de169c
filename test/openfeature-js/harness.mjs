// Shared set-up for the OpenFeature JavaScript tests: a real Switchyard
// (bin/switchyard on a scratch database, started as the dashboard's e2e does),
// an admin token, and the flags and keys the tests read, all made through the
// public API.
import assert from 'node:assert/strict';
import { startServer } from '../../web/e2e/server.mjs';

export { startServer };

export const ADMIN = { name: 'Ada Admin', email: 'ada@example.com', password: 'correct horse battery' };

// The flags every test reads; all but `hidden` are client-side.
export const FLAGS = [
  { key: 'beta', is_enabled: true, client_side: true, rollout_percentage: 0,
    rules: [{ attribute: 'plan', operator: 'equals', values: ['pro'] }] },
  { key: 'greeting', is_enabled: true, client_side: true, flag_type: 'string', default_value: 'hello',
    rules: [{ attribute: 'country', operator: 'equals', values: ['DE'], variant: 'hallo' }] },
  { key: 'limit', is_enabled: true, client_side: true, flag_type: 'integer', default_value: 10,
    rules: [{ attribute: 'plan', operator: 'equals', values: ['pro'], variant: 100 }] },
  { key: 'layout', is_enabled: true, client_side: true, flag_type: 'json', default_value: { cols: 3, dense: false } },
  // A string flag with no default_value: its result is JSON null, which OFREP
  // answers by leaving `value` out ("use the code default").
  { key: 'banner', is_enabled: true, client_side: true, flag_type: 'string' },
  { key: 'hidden', is_enabled: true },
];

// api sends one JSON request with a bearer credential and returns the status
// and the decoded body (null for an empty one).
export async function api(baseUrl, method, path, { bearer, body, headers = {} } = {}) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: {
      ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

// arrange sets the workspace up (first admin, then a personal access token),
// creates FLAGS in the Default project's default environment, and returns
// what the tests need, with one client key and one server key.
export async function arrange(baseUrl) {
  const setup = await fetch(baseUrl + '/api/auth/setup', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ workspace_name: 'Acme', ...ADMIN }),
  });
  assert.equal(setup.status, 200, 'setup');
  const cookie = setup.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const token = await api(baseUrl, 'POST', '/api/tokens', {
    body: { name: 'openfeature tests', scope: 'read_write' },
    headers: { Cookie: cookie, 'X-Service-Request': 'true' },
  });
  assert.equal(token.status, 200, `create token: ${JSON.stringify(token.body)}`);
  const admin = token.body.token;

  const projects = await api(baseUrl, 'GET', '/api/projects', { bearer: admin });
  assert.equal(projects.status, 200);
  const project = projects.body.find((p) => p.slug === 'default') ?? projects.body[0];
  const env = project.environments[0].id;

  for (const flag of FLAGS) {
    const res = await api(baseUrl, 'POST', `/api/environments/${env}/flags`, { bearer: admin, body: flag });
    assert.equal(res.status, 200, `create flag ${flag.key}: ${JSON.stringify(res.body)}`);
  }
  const key = async (kind) => {
    const res = await api(baseUrl, 'POST', `/api/projects/${project.id}/keys`, {
      bearer: admin,
      body: { name: `${kind} key`, environment_id: env, kind },
    });
    assert.equal(res.status, 200, `create ${kind} key: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const clientKey = await key('client');
  const serverKey = await key('server');
  assert.match(clientKey.key, /^pk_live_/);
  return { admin, projectId: project.id, env, clientKey, serverKey };
}

// eventually polls fn until it returns a truthy value or the deadline passes.
export async function eventually(fn, what, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(last)})`);
}
