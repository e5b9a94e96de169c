// Shared set-up for the MCP Inspector tests: a real Switchyard (bin/switchyard
// on a scratch database, started as the dashboard's e2e does), a read_write
// and a read_only token and a few flags, all made through the public API; and
// the official MCP Inspector, in its command-line mode, as the client of
// `switchyard mcp`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../web/e2e/server.mjs';

export { startServer };

const here = path.dirname(fileURLToPath(import.meta.url));
const binary = path.resolve(here, '../../bin/switchyard');

export const ADMIN = { name: 'Ada Admin', email: 'ada@example.com', password: 'correct horse battery' };

// The flags of the Default project's production environment.
export const FLAGS = [
  { key: 'new-checkout', is_enabled: false },
  { key: 'banner', is_enabled: true, flag_type: 'string', default_value: 'hello' },
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
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

// arrange sets the workspace up (first admin, then a read_write personal
// access token, and with it a read_only one), creates FLAGS in production,
// and returns the tokens and the environment's id.
export async function arrange(baseUrl) {
  const setup = await fetch(baseUrl + '/api/auth/setup', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ workspace_name: 'Acme', ...ADMIN }),
  });
  assert.equal(setup.status, 200, 'setup');
  const cookie = setup.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const token = async (scope, auth) => {
    const res = await api(baseUrl, 'POST', '/api/tokens', { body: { name: `mcp ${scope}`, scope }, ...auth });
    assert.equal(res.status, 200, `create ${scope} token: ${JSON.stringify(res.body)}`);
    return res.body.token;
  };
  const readWrite = await token('read_write', { headers: { Cookie: cookie, 'X-Service-Request': 'true' } });
  const readOnly = await token('read_only', { bearer: readWrite });

  const projects = await api(baseUrl, 'GET', '/api/projects', { bearer: readWrite });
  assert.equal(projects.status, 200);
  const project = projects.body.find((p) => p.slug === 'default');
  const env = project.environments.find((e) => e.slug === 'production').id;
  for (const flag of FLAGS) {
    const res = await api(baseUrl, 'POST', `/api/environments/${env}/flags`, { bearer: readWrite, body: flag });
    assert.equal(res.status, 200, `create flag ${flag.key}: ${JSON.stringify(res.body)}`);
  }
  return { readWrite, readOnly, env };
}

// A home of the Inspector's own for the tests, so that nothing it might keep
// (its catalog, stored secrets) lands in the real one.
const home = mkdtempSync(path.join(tmpdir(), 'switchyard-mcp-inspector-'));
process.on('exit', () => rmSync(home, { recursive: true, force: true }));

// inspector runs the Inspector's CLI mode against `bin/switchyard mcp` with
// the server's URL and token (given with -e, as a client configuration
// does) and resolves to its exit code, its output and, when the output is
// JSON, the result. Only the locally installed Inspector runs (npx
// --no-install, offline, no update check): nothing is fetched, and the CLI
// mode never starts the web UI or a browser.
export function inspector(server, token, ...args) {
  const env = { ...process.env, HOME: home, npm_config_offline: 'true', npm_config_update_notifier: 'false' };
  delete env.SWITCHYARD_URL;
  delete env.SWITCHYARD_TOKEN;
  const argv = ['--no-install', '@modelcontextprotocol/inspector', '--cli', binary, 'mcp',
    '-e', `SWITCHYARD_URL=${server.url}`, '-e', `SWITCHYARD_TOKEN=${token}`, ...args];
  return new Promise((resolve) => {
    execFile('npx', argv, { cwd: here, env, timeout: 60_000 }, (err, stdout, stderr) => {
      let result = null;
      try {
        result = JSON.parse(stdout);
      } catch {
        // not JSON: the caller looks at stdout and stderr
      }
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr, result });
    });
  });
}
