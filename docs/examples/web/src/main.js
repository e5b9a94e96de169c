// Reads one Switchyard flag in the browser through OpenFeature and OFREP,
// keeps it current, and reports what it shows as impressions.
//
// Everything is configured in the address bar (see README.md), for example
//   /?base=http://localhost:3000&key=pk_live_…&env=<environment id>&flag=welcome-banner&type=string&user=ada&ctx.plan=pro
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { exposureHook } from './exposures.js';

const params = new URLSearchParams(location.search);
const config = {
  baseUrl: (params.get('base') ?? 'http://localhost:3000').replace(/\/+$/, ''),
  key: params.get('key') ?? '', // a client key: safe to publish, sees only client-side flags
  environmentId: params.get('env') ?? '', // where exposures go; the key's environment
  user: params.get('user') ?? 'user-1',
  flag: params.get('flag') ?? 'welcome-banner',
  type: params.get('type') ?? 'string', // boolean, string, number or object
  mode: params.get('mode') === 'polling' ? 'polling' : 'sse',
  pollMs: Number(params.get('poll') ?? 1000),
};
// The code default: what the page shows when Switchyard has no value for the
// flag (a missing flag, a flag without a value to serve, no connection).
const codeDefault = parseDefault(config.type, params.get('default'));

// Every `ctx.<name>=<value>` parameter becomes an evaluation-context attribute
// that targeting rules can match (`ctx.plan=pro`).
const context = { targetingKey: config.user };
for (const [name, value] of params) {
  if (name.startsWith('ctx.')) context[name.slice(4)] = value;
}

const $ = (id) => document.getElementById(id);
$('flag').textContent = config.flag;
$('user').textContent = config.user;
$('mode').textContent =
  config.mode === 'polling' ? `polling every ${config.pollMs} ms (with ETag)` : 'event stream (no polling)';

function log(message) {
  const item = document.createElement('li');
  item.textContent = `${new Date().toLocaleTimeString()} ${message}`;
  $('log').prepend(item);
}

// The exposure hook batches what the page shows to Switchyard's ingest route.
const exposures = exposureHook({
  baseUrl: config.baseUrl,
  key: config.key,
  environmentId: config.environmentId,
});
window.addEventListener('pagehide', () => exposures.flush({ keepalive: true }));
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') exposures.flush({ keepalive: true });
});

const provider = new OFREPWebProvider({
  baseUrl: config.baseUrl,
  headers: [['Authorization', `Bearer ${config.key}`]],
  // By default the provider connects to the event stream that Switchyard
  // advertises in every bulk answer and refetches only when told to. Polling
  // (with If-None-Match, answered 304 while nothing changed) is opt-in.
  ...(config.mode === 'polling' ? { changeDetection: 'polling', pollInterval: config.pollMs } : {}),
});

const client = OpenFeature.getClient();
client.addHooks(exposures.hook);

function render() {
  const details = evaluate(client, config.type, config.flag, codeDefault);
  $('value').textContent = config.type === 'object' ? JSON.stringify(details.value) : String(details.value);
  $('reason').textContent = details.reason ?? '';
  $('variant').textContent = details.variant === undefined ? '' : `variant ${details.variant}`;
  $('error').textContent = details.errorCode ? `${details.errorCode}: ${details.errorMessage ?? ''}` : '';
}

client.addHandler(ProviderEvents.ConfigurationChanged, (event) => {
  log(`configuration changed: ${(event?.flagsChanged ?? []).join(', ') || 'flags'}`);
  render();
});
client.addHandler(ProviderEvents.Stale, (event) => log(`stale: ${event?.message ?? ''}`));
client.addHandler(ProviderEvents.Error, (event) => {
  log(`error: ${event?.message ?? ''}`);
  render();
});

try {
  await OpenFeature.setContext(context);
  await OpenFeature.setProviderAndWait(provider);
  log('ready');
} catch (err) {
  log(`provider failed: ${err}`);
}
render();
document.body.dataset.ready = 'true';

function evaluate(client, type, flag, fallback) {
  switch (type) {
    case 'boolean':
      return client.getBooleanDetails(flag, fallback);
    case 'number':
      return client.getNumberDetails(flag, fallback);
    case 'object':
      return client.getObjectDetails(flag, fallback);
    default:
      return client.getStringDetails(flag, fallback);
  }
}

function parseDefault(type, text) {
  switch (type) {
    case 'boolean':
      return text === 'true';
    case 'number':
      return text === null ? 0 : Number(text);
    case 'object':
      return text === null ? {} : JSON.parse(text);
    default:
      return text ?? '';
  }
}
