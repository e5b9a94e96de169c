// `switchyard mcp` driven by the official MCP Inspector (@modelcontextprotocol/
// inspector, pinned in package.json) in its command-line mode, as an agent's
// client starts it: the binary over stdio, the connection in its environment,
// against a real server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { api, arrange, FLAGS, inspector, startServer } from './harness.mjs';

const READ_TOOLS = ['get_flag', 'list_change_requests', 'list_environments', 'list_flags', 'list_projects'];
const WRITE_TOOLS = ['create_flag', 'pause_release', 'rollback_release', 'start_release', 'toggle_flag', 'update_flag'];

let server;
let world;

before(async () => {
  server = await startServer();
  world = await arrange(server.url);
});

after(async () => {
  await server?.stop();
});

// ok runs the Inspector and wants it to succeed with a JSON result.
async function ok(token, ...args) {
  const run = await inspector(server, token, ...args);
  assert.equal(run.code, 0, `inspector ${args.join(' ')}: exit ${run.code}\n${run.stdout}\n${run.stderr}`);
  assert.ok(run.result, `inspector ${args.join(' ')}: no JSON result\n${run.stdout}`);
  return run.result;
}

const toolNames = (result) => result.tools.map((t) => t.name).sort();

async function flag(key) {
  const res = await api(server.url, 'GET', `/api/environments/${world.env}/flags/${key}`, { bearer: world.readWrite });
  assert.equal(res.status, 200, `get ${key}`);
  return res.body;
}

test('a read_write token lists every tool, each described with an object input schema', async () => {
  const result = await ok(world.readWrite, '--method', 'tools/list');
  assert.deepEqual(toolNames(result), [...READ_TOOLS, ...WRITE_TOOLS].sort());
  for (const tool of result.tools) {
    assert.ok(tool.description, `${tool.name} has a description`);
    assert.equal(tool.inputSchema.type, 'object', `${tool.name}'s input schema`);
  }
  const listFlags = result.tools.find((t) => t.name === 'list_flags');
  assert.ok(listFlags.inputSchema.required.includes('env'), 'list_flags needs env');
});

test('list_flags returns the environment\'s flags', async () => {
  const result = await ok(world.readWrite, '--method', 'tools/call', '--tool-name', 'list_flags', '--tool-arg', 'env=production');
  assert.notEqual(result.isError, true);
  assert.deepEqual(result.structuredContent.flags.map((f) => f.key).sort(), FLAGS.map((f) => f.key).sort());
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent, 'the text is the same JSON');
});

test('write tools change the flag, as the API then shows', async () => {
  const toggled = await ok(world.readWrite, '--method', 'tools/call', '--tool-name', 'toggle_flag',
    '--tool-arg', 'env=production', 'key=new-checkout', 'on=true');
  assert.equal(toggled.structuredContent.flag.is_enabled, true);
  assert.equal((await flag('new-checkout')).is_enabled, true);

  await ok(world.readWrite, '--method', 'tools/call', '--tool-name', 'update_flag',
    '--tool-arg', 'env=production', 'key=banner', 'patch={"default_value": "bonjour", "rollout_percentage": 30}');
  const banner = await flag('banner');
  assert.equal(banner.default_value, 'bonjour');
  assert.equal(banner.rollout_percentage, 30);
});

test('a refusal is a tool error with the server\'s message', async () => {
  const run = await inspector(server, world.readWrite, '--method', 'tools/call', '--tool-name', 'get_flag',
    '--tool-arg', 'env=production', 'key=no-such-flag');
  assert.notEqual(run.code, 0, 'the Inspector reports the tool error');
  assert.equal(run.result?.isError, true, run.stdout);
  assert.match(run.result.content[0].text, /404/);
});

test('a read_only token lists the read tools only', async () => {
  const result = await ok(world.readOnly, '--method', 'tools/list');
  assert.deepEqual(toolNames(result), READ_TOOLS);
  const call = await ok(world.readOnly, '--method', 'tools/call', '--tool-name', 'get_flag',
    '--tool-arg', 'env=production', 'key=banner');
  assert.equal(call.structuredContent.flag.key, 'banner');
});
