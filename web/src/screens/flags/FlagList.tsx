import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { errorMessage, unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Empty, ErrorBanner, Loading, PageHeader, Time, Toggle } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { flagKeys } from "../../lib/stream";
import { ApprovalRequiredNotice, ChangeRequestNotice, patchFlag, type PatchOutcome } from "./common";
import { allTags, glance, matchesSearch, type Flag } from "./flagform";
import { ReleasingBadge, useActiveReleases } from "../releases/common";
import { LastEvaluated, STATUSES, StatusBadge, isStatusName, statusInfo, useFlagStatuses } from "./FlagStatus";
import { FlagListEmpty } from "./FlagListEmpty";
import "./flags.css";

// RolloutGlance: what the flag does, in one line — rules first, then the
// percentage rollout (bar), then the variant split; and what "off" serves.
function RolloutGlance({ flag }: { flag: Flag }) {
  const g = glance(flag);
  const parts: string[] = [];
  if (g.prerequisites) parts.push(`${g.prerequisites} prerequisite${g.prerequisites > 1 ? "s" : ""}`);
  if (g.rules) parts.push(`${g.rules} rule${g.rules > 1 ? "s" : ""}${g.segments ? ` (${g.segments} segment)` : ""}`);
  const split = g.variants.length ? g.variants.map((v) => `${v.value} ${v.share}%`).join(" / ") : null;
  return (
    <div className="glance">
      <div className="glance-bar" aria-hidden="true">
        <span className="glance-fill" style={{ width: `${g.rollout}%` }} />
      </div>
      <div className="glance-text">
        <span>{g.rollout}% rollout</span>
        {parts.length > 0 && <span> · {parts.join(" · ")}</span>}
        {split && <span className="glance-split"> · {split}</span>}
        <span className="muted"> · off serves {g.serves}</span>
      </div>
    </div>
  );
}

export default function FlagList() {
  const api = useApi();
  const queryClient = useQueryClient();
  const { projectId, envId, project, env } = useScope();
  // Writing flags needs the editor or admin role in the project
  // (docs/reference/identity.md, Roles), but the dashboard knows only who is a
  // workspace admin (lib/session.ts, isAdmin). So every member is offered
  // writes, as New flag always was, and the server answers a viewer with 403.
  // Both New flag and the empty list's next steps follow this one decision.
  const canWrite = true;
  const [params, setParams] = useSearchParams();
  const search = params.get("q") ?? "";
  const tag = params.get("tag") ?? "";
  const showArchived = params.get("archived") === "1";
  const clientOnly = params.get("client_side") === "1";
  const statusParam = params.get("status") ?? "";
  const statusFilter = isStatusName(statusParam) ? statusParam : "";
  const searchId = useId();
  const tagId = useId();
  const archivedId = useId();
  const clientOnlyId = useId();
  const statusId = useId();

  // The list key must stay exactly flagKeys.list(envId) so live updates
  // refresh it; it holds every flag (archived too) and filters here.
  const flags = useQuery({
    queryKey: flagKeys.list(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flags", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });

  // Status is secondary: its failure leaves the list whole (cells show —).
  const { query: statuses, byKey: statusOf } = useFlagStatuses(envId);
  const statusKnown = !!statuses.data;
  // Likewise the releases: a flag being released gets a badge linking to it.
  const { byFlag: releaseOf } = useActiveReleases(envId);

  const [outcome, setOutcome] = useState<PatchOutcome | null>(null);
  const toggle = useMutation({
    mutationFn: ({ key, enabled }: { key: string; enabled: boolean }) => patchFlag(api, envId, key, { is_enabled: enabled }),
    onMutate: () => setOutcome(null),
    onSuccess: (res) => {
      setOutcome(res);
      if (res.kind === "flag") {
        queryClient.setQueryData<Flag[]>(flagKeys.list(envId), (old) => old?.map((f) => (f.key === res.flag.key ? res.flag : f)));
        queryClient.setQueryData(flagKeys.one(envId, res.flag.key), res.flag);
      }
    },
  });

  const setParam = (name: string, value: string, fallback = "") => {
    const next = new URLSearchParams(params);
    if (value === fallback) next.delete(name);
    else next.set(name, value);
    setParams(next, { replace: true });
  };

  const all = flags.data ?? [];
  const tags = useMemo(() => allTags(all), [all]);
  const filtered = all.filter(
    (f) =>
      matchesSearch(f, search) &&
      (!tag || f.tags.includes(tag)) &&
      (showArchived || f.archived_at === null) &&
      (!clientOnly || f.client_side),
  );
  // The status filter applies only once statuses are known; until then (or
  // if they cannot be read) the list is not narrowed by it.
  const shown = statusFilter && statusKnown ? filtered.filter((f) => statusOf.get(f.key)?.status === statusFilter) : filtered;
  const statusCount = (s: string) => filtered.filter((f) => statusOf.get(f.key)?.status === s).length;
  const clientCount = all.filter((f) => f.client_side && f.archived_at === null).length;
  const archivedCount = all.filter((f) => f.archived_at !== null).length;

  return (
    <div className="flags-page">
      <PageHeader
        title="Flags"
        actions={
          canWrite && (
            <Link className="btn btn-primary" to={envPath(projectId, envId, "flags/new")}>
              New flag
            </Link>
          )
        }
      >
        {env ? `${env.name}: ` : ""}
        {flags.data ? `${all.length - archivedCount} active, ${archivedCount} archived` : ""}
      </PageHeader>
      <ApprovalRequiredNotice env={env} projectId={projectId} />

      <div className="row flag-filters" role="search">
        <div className="field">
          <label htmlFor={searchId}>Search</label>
          <input
            id={searchId}
            type="search"
            placeholder="Key, description, tag or owner"
            value={search}
            onChange={(e) => setParam("q", e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={tagId}>Tag</label>
          <select id={tagId} value={tag} onChange={(e) => setParam("tag", e.target.value)}>
            <option value="">All tags</option>
            {tags.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <label className="check" htmlFor={archivedId}>
          <input
            id={archivedId}
            type="checkbox"
            checked={showArchived}
            onChange={(e) => setParam("archived", e.target.checked ? "1" : "")}
          />
          Show archived ({archivedCount})
        </label>
        <label className="check" htmlFor={clientOnlyId}>
          <input
            id={clientOnlyId}
            type="checkbox"
            checked={clientOnly}
            onChange={(e) => setParam("client_side", e.target.checked ? "1" : "")}
          />
          Client-side only ({clientCount})
        </label>
        <div className="field">
          <label htmlFor={statusId}>Status</label>
          <select id={statusId} value={statusFilter} onChange={(e) => setParam("status", e.target.value)}>
            <option value="">All statuses</option>
            {STATUSES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
                {statusKnown ? ` (${statusCount(s.value)})` : ""}
              </option>
            ))}
          </select>
        </div>
      </div>
      {statuses.error && (
        <p className="muted status-unavailable" role="status">
          Flag status could not be loaded ({errorMessage(statuses.error)}): Status and Last evaluated show —
          {statusFilter ? ", and the status filter is not applied" : ""}.
        </p>
      )}

      <div aria-live="polite">
        {outcome?.kind === "change_request" && <ChangeRequestNotice cr={outcome.changeRequest} projectId={projectId} envId={envId} />}
      </div>
      <ErrorBanner error={toggle.error} action="change flags in this environment" />
      <ErrorBanner error={flags.error} action="view the flags of this environment" />

      {flags.isPending && envId ? (
        <Loading label="Loading flags…" />
      ) : statusFilter && statuses.isPending && all.length > 0 ? (
        <Loading label="Loading flag status…" />
      ) : all.length === 0 && !flags.error ? (
        <FlagListEmpty projectId={projectId} envId={envId} project={project} env={env} canWrite={canWrite} />
      ) : shown.length === 0 && !flags.error ? (
        <Empty title="No flags match">
          <p>
            {clientOnly && !all.some((f) => f.client_side)
              ? "No flag of this environment is client-side yet: a browser or app with a client key sees none. Open a flag and turn on its Client-side switch."
              : statusFilter && filtered.length > 0
                ? `No flag here is ${statusInfo(statusFilter).label.toLowerCase()}. Choose another status or All statuses.`
                : "Change the search or filters."}
          </p>
        </Empty>
      ) : (
        flags.data && (
          <div className="table-wrap">
            <table className="flag-table">
              <caption className="sr-only">
                Flags of {env?.name ?? "this environment"} ({shown.length} shown)
              </caption>
              <thead>
                <tr>
                  <th scope="col">Enabled</th>
                  <th scope="col">Flag</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last evaluated</th>
                  <th scope="col">Type</th>
                  <th scope="col">Rollout at a glance</th>
                  <th scope="col">Tags</th>
                  <th scope="col">Owner</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((f) => {
                  const busy = toggle.isPending && toggle.variables?.key === f.key;
                  const st = statusOf.get(f.key);
                  return (
                    <tr key={f.key} className={f.archived_at ? "flag-archived" : undefined}>
                      <td>
                        <Toggle
                          checked={f.is_enabled}
                          label={`Enable ${f.key}`}
                          disabled={busy}
                          onChange={(enabled) => toggle.mutate({ key: f.key, enabled })}
                        />
                      </td>
                      <td className="flag-cell">
                        <Link to={envPath(projectId, envId, `flags/${encodeURIComponent(f.key)}`)} className="flag-key">
                          {f.key}
                        </Link>
                        {releaseOf.get(f.key) && <ReleasingBadge release={releaseOf.get(f.key)!} projectId={projectId} envId={envId} />}
                        {f.client_side && (
                          <span className="pill pill-client" title="Client keys (browsers, mobile apps) can evaluate this flag">
                            client-side
                          </span>
                        )}
                        {f.archived_at && <span className="pill pill-warning">archived</span>}
                        {f.description && (
                          <div className="muted flag-desc" title={f.description}>
                            {f.description}
                          </div>
                        )}
                      </td>
                      <td>
                        {st ? (
                          <StatusBadge status={st.status} />
                        ) : statuses.isPending ? (
                          <span className="muted">
                            …<span className="sr-only"> loading status</span>
                          </span>
                        ) : (
                          <span className="muted">—</span>
                        )}
                      </td>
                      <td className="nowrap">{st ? <LastEvaluated at={st.last_evaluated_at} /> : <span className="muted">—</span>}</td>
                      <td>{f.flag_type}</td>
                      <td>
                        <RolloutGlance flag={f} />
                      </td>
                      <td>
                        {f.tags.map((t) => (
                          <span className="tag" key={t}>
                            {t}
                          </span>
                        ))}
                      </td>
                      <td>{f.owner_email ?? <span className="muted">—</span>}</td>
                      <td className="nowrap">
                        <Time value={f.updated_at} />
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
