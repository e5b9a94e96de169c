// The environment's guarded releases, newest first, filtered by status (and,
// from a flag's page, by flag); both filters are kept in the address.
import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { Link, useSearchParams } from "react-router";
import { unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Empty, ErrorBanner, Loading, PageHeader, Time } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { POLL_MS, ReleaseStatusPill, releaseKeys, releasePath } from "./common";
import { RELEASE_STATUSES, STATUS_LABEL, formatDuration, isActive, isReleaseStatus } from "./releaseform";
import "./releases.css";

export default function Releases() {
  const api = useApi();
  const { projectId, envId, env } = useScope();
  const [params, setParams] = useSearchParams();
  const statusParam = params.get("status") ?? "";
  const status = isReleaseStatus(statusParam) ? statusParam : "";
  const flag = params.get("flag") ?? "";
  const statusId = useId();
  const releases = useQuery({
    queryKey: releaseKeys.list(envId, status, flag),
    queryFn: () =>
      unwrap(
        api.GET("/api/environments/{env_id}/releases", {
          params: {
            path: { env_id: envId },
            query: { ...(status ? { status } : {}), ...(flag ? { flag_key: flag } : {}) },
          },
        }),
      ),
    enabled: !!envId,
    // Stages advance by the clock: keep the list current while any release guards.
    refetchInterval: (q) => (q.state.data?.some((r) => isActive(r.status)) ? POLL_MS : false),
  });
  const set = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next, { replace: true });
  };
  const list = releases.data ?? [];

  return (
    <div className="releases">
      <PageHeader title="Guarded releases">
        {env ? `${env.name}: ` : ""}flags ramped by stages and rolled back by themselves when a guardrail metric gets worse. Start
        one from a boolean flag’s page.
      </PageHeader>
      <div className="row release-filters">
        <div className="field">
          <label htmlFor={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => set("status", e.target.value)}>
            <option value="">All statuses</option>
            {RELEASE_STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABEL[s]}
              </option>
            ))}
          </select>
        </div>
        {flag && (
          <p>
            Flag <code>{flag}</code> only ·{" "}
            <button type="button" className="btn btn-small" onClick={() => set("flag", "")}>
              Show every flag
            </button>
          </p>
        )}
      </div>
      <ErrorBanner error={releases.error} action="view the releases of this environment" />
      {releases.isPending && envId ? (
        <Loading label="Loading releases…" />
      ) : list.length === 0 && !releases.error ? (
        <Empty title={status || flag ? "No release matches" : "No guarded releases yet"}>
          <p>
            {status || flag ? (
              "Choose another status or flag."
            ) : (
              <>
                Open a boolean flag from the <Link to={envPath(projectId, envId, "flags")}>flag list</Link> and start a guarded
                release there.
              </>
            )}
          </p>
        </Empty>
      ) : (
        list.length > 0 && (
          <div className="table-wrap">
            <table className="release-table">
              <caption className="sr-only">Guarded releases ({list.length} shown)</caption>
              <thead>
                <tr>
                  <th scope="col">Flag</th>
                  <th scope="col">Status</th>
                  <th scope="col">Stage</th>
                  <th scope="col">Metrics</th>
                  <th scope="col">Started</th>
                  <th scope="col">Ended, and why</th>
                </tr>
              </thead>
              <tbody>
                {list.map((r) => {
                  const st = r.stages[r.stage_index];
                  return (
                    <tr key={r.id}>
                      <td>
                        <Link to={releasePath(projectId, envId, r.id)} className="flag-key" aria-label={`Release of ${r.flag_key}, started ${new Date(r.started_at).toLocaleString()}`}>
                          {r.flag_key}
                        </Link>
                      </td>
                      <td>
                        <ReleaseStatusPill status={r.status} />
                      </td>
                      <td className="nowrap">
                        {r.stage_index + 1} of {r.stages.length}
                        {st && (
                          <>
                            {" "}
                            · {st.percentage} % for {formatDuration(st.duration_seconds)}
                          </>
                        )}
                      </td>
                      <td>
                        {r.metrics.map((m) => (
                          <code key={m.event_key} className="tag">
                            {m.event_key}
                          </code>
                        ))}
                      </td>
                      <td className="nowrap">
                        <Time value={r.started_at} />
                      </td>
                      <td>
                        {r.ended_at ? <Time value={r.ended_at} /> : <span className="muted">—</span>}
                        {r.reason && <div className="muted release-reason">{r.reason}</div>}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )
      )}
    </div>
  );
}
