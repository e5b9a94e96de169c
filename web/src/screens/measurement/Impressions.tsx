// Impressions: the live evaluation log (polled every 3 s with since_id),
// per-flag statistics, the exposure breakdown of one flag with its daily
// timeline, and the goal event keys seen.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { TimelineChart } from "../../components/charts";
import { Button, Empty, ErrorBanner, Loading, PageHeader, Time } from "../../components/ui";
import { useScope } from "../../lib/session";
import { measurementKeys, useEventKeys, useFlags } from "./common";
import { formatCount, formatPercent, maxId, mergeNewest, pivotTimeline, share } from "./format";
import "./measurement.css";

type Impression = Schemas["Impression"];

export const LOG_REFRESH_MS = 3000;
export const LOG_MAX_ROWS = 200;
const STATS_REFRESH_MS = 30_000;

export default function Impressions() {
  const { envId, env } = useScope();
  const flags = useFlags(envId);
  const stats = useImpressionStats(envId);
  const [exposureFlag, setExposureFlag] = useState("");
  const exposureRef = useRef<HTMLElement>(null);

  // Flag choices: the environment's flags plus any key seen only in impressions.
  const flagKeys = useMemo(() => {
    const keys = new Set<string>((flags.data ?? []).map((f) => f.key));
    for (const s of stats.data ?? []) keys.add(s.flag_key);
    return [...keys].sort();
  }, [flags.data, stats.data]);

  const topFlag = useMemo(
    () => [...(stats.data ?? [])].sort((a, b) => b.total - a.total)[0]?.flag_key ?? "",
    [stats.data],
  );
  const chosen = exposureFlag || topFlag;

  return (
    <div className="measurement">
      <PageHeader title="Impressions">
        What SDKs evaluated{env ? ` in ${env.name}` : ""}, as they report it. Days are UTC days.
      </PageHeader>
      <ImpressionLog envId={envId} flagKeys={flagKeys} />
      <section aria-labelledby="stats-h">
        <h2 id="stats-h">Flag statistics</h2>
        <FlagStats
          stats={stats}
          onExposure={(key) => {
            setExposureFlag(key);
            exposureRef.current?.scrollIntoView?.({ behavior: "smooth", block: "start" });
            exposureRef.current?.querySelector<HTMLSelectElement>("select")?.focus();
          }}
        />
      </section>
      <section aria-labelledby="exposure-h" ref={exposureRef}>
        <h2 id="exposure-h">Exposure</h2>
        <ExposurePanel envId={envId} flagKey={chosen} flagKeys={flagKeys} onFlagKey={setExposureFlag} />
      </section>
      <section aria-labelledby="events-h">
        <h2 id="events-h">Goal events</h2>
        <EventKeys envId={envId} />
      </section>
    </div>
  );
}

function useImpressionStats(envId: string) {
  const api = useApi();
  return useQuery({
    queryKey: measurementKeys.impressionStats(envId),
    queryFn: () =>
      unwrap(api.GET("/api/environments/{env_id}/impressions/stats", { params: { path: { env_id: envId } } })),
    enabled: Boolean(envId),
    refetchInterval: STATS_REFRESH_MS,
  });
}

type LogFilters = { flag_key: string; user_id: string; value: string };
const NO_FILTERS: LogFilters = { flag_key: "", user_id: "", value: "" };

// ImpressionLog loads the newest rows, then every intervalMs asks only for
// rows above the highest id it holds and puts them on top (at most 200 kept).
export function ImpressionLog({
  envId,
  flagKeys,
  intervalMs = LOG_REFRESH_MS,
}: {
  envId: string;
  flagKeys: string[];
  intervalMs?: number;
}) {
  const api = useApi();
  const [rows, setRows] = useState<Impression[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [paused, setPaused] = useState(false);
  const [filters, setFilters] = useState<LogFilters>(NO_FILTERS);
  const [draft, setDraft] = useState<LogFilters>(NO_FILTERS);
  const lastId = useRef<number | undefined>(undefined);

  useEffect(() => {
    if (!envId) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const base = {
      flag_key: filters.flag_key || undefined,
      user_id: filters.user_id || undefined,
      value: filters.value || undefined,
    };
    const tick = async () => {
      const since = lastId.current;
      try {
        const data = await unwrap(
          api.GET("/api/environments/{env_id}/impressions", {
            params: {
              path: { env_id: envId },
              query: since === undefined ? { ...base, limit: 50 } : { ...base, since_id: since, limit: LOG_MAX_ROWS },
            },
          }),
        );
        if (cancelled) return;
        setError(null);
        setTotal(data.total);
        setLoaded(true);
        if (data.items.length > 0) {
          lastId.current = Math.max(since ?? 0, maxId(data.items) ?? 0);
          setRows((cur) => mergeNewest(cur, data.items, LOG_MAX_ROWS));
        }
      } catch (err) {
        if (cancelled) return;
        setError(err);
        setLoaded(true);
      }
      if (!cancelled && !paused) timer = setTimeout(() => void tick(), intervalMs);
    };
    if (lastId.current === undefined || !paused) void tick();
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
    };
  }, [api, envId, filters, paused, intervalMs]);

  const apply = (next: LogFilters) => {
    lastId.current = undefined;
    setRows([]);
    setTotal(null);
    setLoaded(false);
    setFilters(next);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    apply({ ...draft, user_id: draft.user_id.trim(), value: draft.value.trim() });
  };
  const filtered = filters.flag_key || filters.user_id || filters.value;

  return (
    <section aria-labelledby="log-h">
      <div className="section-head">
        <h2 id="log-h">Live log</h2>
        <div className="row">
          <span role="status" className={`pill ${paused ? "pill-warning" : "pill-success"}`}>
            {paused ? "Paused" : `Live · every ${intervalMs / 1000} s`}
          </span>
          <Button onClick={() => setPaused((p) => !p)} aria-pressed={paused}>
            {paused ? "Resume" : "Pause"}
          </Button>
        </div>
      </div>
      <form className="row filters" onSubmit={submit} aria-label="Filter impressions">
        <label className="row">
          Flag
          <select
            value={draft.flag_key}
            onChange={(e) => {
              const next = { ...draft, flag_key: e.target.value };
              setDraft(next);
              apply({ ...filters, flag_key: next.flag_key });
            }}
          >
            <option value="">All flags</option>
            {flagKeys.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label className="row">
          User ID
          <input value={draft.user_id} onChange={(e) => setDraft({ ...draft, user_id: e.target.value })} placeholder="exact match" />
        </label>
        <label className="row">
          Value
          <input value={draft.value} onChange={(e) => setDraft({ ...draft, value: e.target.value })} placeholder="exact match" size={10} />
        </label>
        <Button type="submit">Apply</Button>
        {filtered && (
          <Button
            variant="ghost"
            onClick={() => {
              setDraft(NO_FILTERS);
              apply(NO_FILTERS);
            }}
          >
            Clear filters
          </Button>
        )}
        <span className="muted">
          {total === null ? "" : `Showing ${formatCount(rows.length)} of ${formatCount(total)} matching`}
        </span>
      </form>
      {error ? <ErrorBanner error={error} action="view impressions in this environment" /> : null}
      {!loaded ? (
        <Loading />
      ) : rows.length === 0 ? (
        !error && (
          <Empty title={filtered ? "No impressions match these filters" : "No impressions yet"}>
            <p>New evaluations appear here within a few seconds of an SDK reporting them.</p>
          </Empty>
        )
      ) : (
        // Focusable so keyboard users can scroll it.
        <div className="table-wrap log-wrap" tabIndex={0} role="region" aria-label="Live log rows">
          <table>
            <thead>
              <tr>
                <th scope="col">Evaluated</th>
                <th scope="col">Flag</th>
                <th scope="col">User</th>
                <th scope="col">Value</th>
                <th scope="col">Context</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => {
                const ctx = r.context ? JSON.stringify(r.context) : "";
                return (
                  <tr key={r.id}>
                    <td>
                      <Time value={r.evaluated_at} />
                    </td>
                    <th scope="row">
                      <code>{r.flag_key}</code>
                    </th>
                    <td>{r.user_id ?? <span className="muted">anonymous</span>}</td>
                    <td>
                      <code>{r.value}</code>
                    </td>
                    <td>
                      {ctx ? (
                        <code className="ctx" title={ctx}>
                          {ctx}
                        </code>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function FlagStats({
  stats,
  onExposure,
}: {
  stats: ReturnType<typeof useImpressionStats>;
  onExposure: (flagKey: string) => void;
}) {
  if (stats.isPending) return <Loading />;
  if (stats.error) return <ErrorBanner error={stats.error} action="view impression statistics in this environment" />;
  if (stats.data.length === 0) return <Empty title="No impressions reported yet" />;
  const rows = [...stats.data].sort((a, b) => b.total - a.total);
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Flag</th>
            <th scope="col" className="num">Impressions</th>
            <th scope="col" className="num">True</th>
            <th scope="col" className="num">False</th>
            <th scope="col" className="num">True share</th>
            <th scope="col" className="num">Unique users</th>
            <th scope="col">Last seen</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={s.flag_key}>
              <th scope="row">
                <code>{s.flag_key}</code>
              </th>
              <td className="num">{formatCount(s.total)}</td>
              <td className="num">{formatCount(s.true_count)}</td>
              <td className="num">{formatCount(s.false_count)}</td>
              <td className="num">{formatPercent(share(s.true_count, s.true_count + s.false_count))}</td>
              <td className="num">{formatCount(s.unique_users)}</td>
              <td>
                <Time value={s.last_seen} />
              </td>
              <td className="actions">
                <Button className="btn-small" onClick={() => onExposure(s.flag_key)} aria-label={`Show exposure of ${s.flag_key}`}>
                  Exposure
                </Button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function clampDays(n: number): number {
  if (!Number.isFinite(n)) return 14;
  return Math.min(90, Math.max(1, Math.round(n)));
}

function ExposurePanel({
  envId,
  flagKey,
  flagKeys,
  onFlagKey,
}: {
  envId: string;
  flagKey: string;
  flagKeys: string[];
  onFlagKey: (k: string) => void;
}) {
  const api = useApi();
  const [days, setDays] = useState(14);
  const [daysText, setDaysText] = useState("14");
  const exposure = useQuery({
    queryKey: measurementKeys.exposure(envId, flagKey, days),
    queryFn: () =>
      unwrap(
        api.GET("/api/environments/{env_id}/impressions/exposure", {
          params: { path: { env_id: envId }, query: { flag_key: flagKey, days } },
        }),
      ),
    enabled: Boolean(envId && flagKey),
    refetchInterval: STATS_REFRESH_MS,
  });
  const choices = flagKey && !flagKeys.includes(flagKey) ? [flagKey, ...flagKeys] : flagKeys;
  const pivot = useMemo(
    () =>
      exposure.data
        ? pivotTimeline(exposure.data.timeline, days, new Date(), exposure.data.variants.map((v) => v.value))
        : null,
    [exposure.data, days],
  );

  return (
    <div className="card">
      <div className="row filters">
        <label className="row">
          Flag
          <select value={flagKey} onChange={(e) => onFlagKey(e.target.value)}>
            {!flagKey && <option value="">Choose a flag…</option>}
            {choices.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label className="row">
          Days
          <input
            type="number"
            min={1}
            max={90}
            value={daysText}
            onChange={(e) => {
              setDaysText(e.target.value);
              if (e.target.value !== "") setDays(clampDays(Number(e.target.value)));
            }}
            onBlur={() => setDaysText(String(days))}
            style={{ width: "5em" }}
          />
        </label>
        <span className="muted">1–90; the timeline covers the last {days} UTC day{days === 1 ? "" : "s"}.</span>
      </div>
      {!flagKey ? (
        <p className="muted">Choose a flag to see which values users received.</p>
      ) : exposure.isPending ? (
        <Loading />
      ) : exposure.error ? (
        <ErrorBanner error={exposure.error} action="view exposure in this environment" />
      ) : (
        <>
          <dl className="stats">
            <div>
              <dt>Impressions</dt>
              <dd>{formatCount(exposure.data.total_impressions)}</dd>
            </div>
            <div>
              <dt>Unique users</dt>
              <dd>{formatCount(exposure.data.total_users)}</dd>
            </div>
          </dl>
          {exposure.data.variants.length === 0 ? (
            <p className="muted">
              No impressions of <code>{flagKey}</code> yet.
            </p>
          ) : (
            <div className="exposure-grid">
              <div className="table-wrap">
                <table>
                  <caption className="sr-only">Exposure of {flagKey} by value</caption>
                  <thead>
                    <tr>
                      <th scope="col">Value</th>
                      <th scope="col" className="num">Impressions</th>
                      <th scope="col" className="num">Share</th>
                      <th scope="col" className="num">Unique users</th>
                    </tr>
                  </thead>
                  <tbody>
                    {exposure.data.variants.map((v) => (
                      <tr key={v.value}>
                        <th scope="row">
                          <code>{v.value}</code>
                        </th>
                        <td className="num">{formatCount(v.impressions)}</td>
                        <td className="num">{formatPercent(share(v.impressions, exposure.data.total_impressions))}</td>
                        <td className="num">{formatCount(v.unique_users)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {pivot && (
                <TimelineChart
                  title={`Daily impressions of ${flagKey} by value, last ${days} days`}
                  days={pivot.days}
                  series={pivot.series}
                />
              )}
            </div>
          )}
        </>
      )}
    </div>
  );
}

function EventKeys({ envId }: { envId: string }) {
  const events = useEventKeys(envId);
  if (events.isPending) return <Loading />;
  if (events.error) return <ErrorBanner error={events.error} action="view goal events in this environment" />;
  if (events.data.length === 0)
    return (
      <Empty title="No goal events yet">
        <p>SDKs report them with their track call; experiments count them as conversions.</p>
      </Empty>
    );
  const rows = [...events.data].sort((a, b) => b.total - a.total);
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Event key</th>
            <th scope="col" className="num">Events</th>
            <th scope="col" className="num">Unique users</th>
            <th scope="col">Last seen</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((k) => (
            <tr key={k.event_key}>
              <th scope="row">
                <code>{k.event_key}</code>
              </th>
              <td className="num">{formatCount(k.total)}</td>
              <td className="num">{formatCount(k.unique_users)}</td>
              <td>
                <Time value={k.last_seen} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
