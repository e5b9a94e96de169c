// An OpenFeature hook that reports what the page shows as Switchyard
// impressions. Bulk evaluation (what the web provider does) is a prefetch and
// records nothing on the server, so the page reports each value it actually
// evaluates, in batches, to POST /api/environments/{env_id}/impressions with
// the same client key.
//
// Reporting never blocks an evaluation: the hook only appends to a bounded
// queue (a full queue drops and counts, as Switchyard's SDK does), and a
// timer, a full batch or leaving the page sends it.

const MAX_BATCH = 500; // the ingest route's limit

export function exposureHook({ baseUrl, key, environmentId, flushIntervalMs = 1000, maxQueue = 1000 }) {
  const url = `${baseUrl}/api/environments/${encodeURIComponent(environmentId)}/impressions`;
  let queue = [];
  let timer;
  const stats = { sent: 0, dropped: 0, failed: 0 };

  async function flush({ keepalive = false } = {}) {
    clearTimeout(timer);
    timer = undefined;
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(MAX_BATCH);
      try {
        const res = await fetch(url, {
          method: 'POST',
          keepalive, // lets the last batch outlive the page
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(batch),
        });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        stats.sent += batch.length;
      } catch (err) {
        // Fire and forget: exposures are analytics, never worth breaking the page.
        stats.failed += batch.length;
        console.warn(`switchyard: ${batch.length} impressions not reported: ${err}`);
      }
    }
  }

  const hook = {
    // after runs only for successful evaluations: an error (an unknown flag,
    // a revoked key) shows the code default but is not an exposure.
    after(hookContext, details) {
      if (details.errorCode) return;
      if (queue.length >= maxQueue) {
        stats.dropped++;
        return;
      }
      const user = hookContext.context?.targetingKey;
      queue.push({
        flag_key: details.flagKey,
        user_id: user ? String(user) : null,
        value: render(details.value),
        evaluated_at: new Date().toISOString(),
      });
      if (queue.length >= MAX_BATCH) void flush();
      else timer ??= setTimeout(() => void flush(), flushIntervalMs);
    },
  };
  return { hook, flush, stats };
}

// render writes a value as Switchyard renders impression values: booleans as
// true/false, strings as they are, numbers in shortest form, JSON compactly.
function render(value) {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
