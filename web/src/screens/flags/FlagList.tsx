import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Empty, ErrorBanner, Loading, PageHeader, Time, Toggle } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { flagKeys } from "../../lib/stream";
import { ApprovalRequiredNotice, ChangeRequestNotice, patchFlag, type PatchOutcome } from "./common";
import { allTags, glance, matchesSearch, type Flag } from "./flagform";
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
  const { projectId, envId, env } = useScope();
  const [params, setParams] = useSearchParams();
  const search = params.get("q") ?? "";
  const tag = params.get("tag") ?? "";
  const showArchived = params.get("archived") === "1";
  const clientOnly = params.get("client_side") === "1";
  const searchId = useId();
  const tagId = useId();
  const archivedId = useId();
  const clientOnlyId = useId();

  // The list key must stay exactly flagKeys.list(envId) so live updates
  // refresh it; it holds every flag (archived too) and filters here.
  const flags = useQuery({
    queryKey: flagKeys.list(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flags", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });

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
  const shown = all.filter(
    (f) =>
      matchesSearch(f, search) &&
      (!tag || f.tags.includes(tag)) &&
      (showArchived || f.archived_at === null) &&
      (!clientOnly || f.client_side),
  );
  const clientCount = all.filter((f) => f.client_side && f.archived_at === null).length;
  const archivedCount = all.filter((f) => f.archived_at !== null).length;

  return (
    <div className="flags-page">
      <PageHeader
        title="Flags"
        actions={
          <Link className="btn btn-primary" to={envPath(projectId, envId, "flags/new")}>
            New flag
          </Link>
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
      </div>

      <div aria-live="polite">
        {outcome?.kind === "change_request" && <ChangeRequestNotice cr={outcome.changeRequest} projectId={projectId} envId={envId} />}
      </div>
      <ErrorBanner error={toggle.error} action="change flags in this environment" />
      <ErrorBanner error={flags.error} action="view the flags of this environment" />

      {flags.isPending && envId ? (
        <Loading label="Loading flags…" />
      ) : all.length === 0 && !flags.error ? (
        <Empty title="No flags yet">
          <p>Create the first flag of this environment.</p>
          <Link className="btn btn-primary" to={envPath(projectId, envId, "flags/new")}>
            New flag
          </Link>
        </Empty>
      ) : shown.length === 0 && !flags.error ? (
        <Empty title="No flags match">
          <p>
            {clientOnly && !all.some((f) => f.client_side)
              ? "No flag of this environment is client-side yet: a browser or app with a client key sees none. Open a flag and turn on its Client-side switch."
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
                      <td>
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
