// The workspace audit trail (GET /api/audit): every write and sign-in,
// newest first, with its filters in the address so that links (a flag's
// History, a shared URL) open the same view. Each entry opens to its
// before/after diff, its actor and its request; the export downloads the
// same filters as NDJSON, and workspace admins can verify the hash chain.
import { keepPreviousData, useInfiniteQuery, useMutation } from "@tanstack/react-query";
import { Fragment, useState, type FormEvent } from "react";
import { Link, useSearchParams } from "react-router";
import { unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { SideBySide } from "../../components/diff";
import { historyPath, type ResourceType } from "../../components/history";
import { Button, Empty, ErrorBanner, Field, Loading, PageHeader, Time } from "../../components/ui";
import { isAdmin, useProjects, useScope } from "../../lib/session";
import { instantToLocal, localToInstant } from "../../lib/targeting";
import "./audit.css";

type Entry = Schemas["WorkspaceAuditEntry"];
type Actor = Schemas["AuditActor"];

// The filters GET /api/audit takes, in the order the form shows them.
export const FILTERS = ["project_id", "environment_id", "actor", "resource_type", "resource_id", "action", "from", "to"] as const;
export type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

export const RESOURCE_TYPES: { value: ResourceType; label: string }[] = [
  { value: "workspace", label: "Workspace" },
  { value: "project", label: "Project" },
  { value: "environment", label: "Environment" },
  { value: "sdk_key", label: "SDK key" },
  { value: "member", label: "Member" },
  { value: "user", label: "User" },
  { value: "token", label: "Access token" },
  { value: "scim_token", label: "SCIM token" },
  { value: "sso", label: "Single sign-on" },
  { value: "scim", label: "SCIM" },
  { value: "flag", label: "Flag" },
  { value: "segment", label: "Segment" },
  { value: "change_request", label: "Change request" },
  { value: "schedule", label: "Scheduled change" },
  { value: "webhook", label: "Webhook" },
  { value: "chat", label: "Chat integration" },
  { value: "release", label: "Guarded release" },
  { value: "auth", label: "Sign-in" },
];

const typeLabel = (t: string) => RESOURCE_TYPES.find((r) => r.value === t)?.label ?? t;

// The server's pattern for `action`: an action, or every action of a resource.
const ACTION_RE = /^[a-z_]+(\.([a-z_]+|\*))?$/;

// filtersOf reads the filters from the address, ignoring anything else.
export function filtersOf(params: URLSearchParams): Filters {
  const f: Filters = {};
  for (const k of FILTERS) {
    const v = params.get(k)?.trim();
    if (v) f[k] = v;
  }
  return f;
}

export function queryString(f: Filters): string {
  const q = new URLSearchParams();
  for (const k of FILTERS) if (f[k]) q.set(k, f[k]);
  return q.toString();
}

// actorSummary is who acted, in a few words.
export function actorSummary(a: Actor): string {
  switch (a.kind) {
    case "user":
      return a.email ?? `user ${a.id ?? "?"}`;
    case "token":
      return `${a.email ?? "?"} (token ${a.label ?? "?"}…)`;
    case "sdk_key":
      return `SDK key ${a.label ?? a.id ?? "?"}…`;
    case "scim":
      return `SCIM${a.label ? ` (token ${a.label}…)` : ""}`;
    case "sso":
      return `${a.email ?? "?"} (single sign-on)`;
    case "release":
      return `guarded release${a.label ? ` of ${a.label}` : ""}`;
    case "schedule":
      return `scheduled change${a.id ? ` #${a.id}` : ""}`;
    case "system":
      return `system${a.label ? `: ${a.label}` : ""}`;
    case "anonymous":
      return `anonymous${a.email ? ` (tried ${a.email})` : ""}`;
  }
}

// What an actor's label is, by kind (AuditActor.label).
function labelName(kind: Actor["kind"]): string {
  if (kind === "token" || kind === "sdk_key" || kind === "scim") return "Token prefix";
  if (kind === "release") return "Flag";
  if (kind === "system") return "What";
  return "Label";
}

export function resourceSummary(r: Entry["resource"]): string {
  const name = r.name ?? r.key;
  return name && name !== r.id ? `${name} (${r.id})` : r.id;
}

function verbClass(action: string): string {
  const verb = action.slice(action.indexOf(".") + 1);
  if (verb === "created" || verb === "login" || verb === "setup") return "pill-success";
  if (verb === "deleted" || verb === "revoked" || verb === "rolled_back") return "pill-danger";
  if (verb === "login_failed" || verb === "locked" || verb === "deactivated") return "pill-warning";
  return "";
}

// asObject shows a before/after that is not an object as one field.
function asObject(v: unknown): Record<string, unknown> | null {
  if (v === null || v === undefined) return null;
  return typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
}

export default function AuditTrail() {
  const api = useApi();
  const { me } = useScope();
  const projects = useProjects();
  const [params, setParams] = useSearchParams();
  const filters = filtersOf(params);
  const qs = queryString(filters);
  const admin = isAdmin(me);

  const list = useInfiniteQuery({
    queryKey: ["audit-trail", qs],
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET("/api/audit", {
          params: {
            query: { ...filters, resource_type: filters.resource_type as ResourceType | undefined, ...(pageParam ? { cursor: pageParam } : {}) },
          },
        }),
      ),
    initialPageParam: "",
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    placeholderData: keepPreviousData,
  });
  const entries = list.data?.pages.flatMap((p) => p.items) ?? [];

  const projectName = (id: string | null) => (id ? (projects.data?.find((p) => p.id === id)?.name ?? id.slice(0, 8)) : "");
  const envName = (id: string | null) => {
    if (!id) return "";
    for (const p of projects.data ?? []) {
      const e = p.environments.find((x) => x.id === id);
      if (e) return e.name;
    }
    return id.slice(0, 8);
  };
  const resource = filters.resource_type && filters.resource_id ? `${typeLabel(filters.resource_type).toLowerCase()} ${filters.resource_id}` : "";

  return (
    <div className="stack audit">
      <PageHeader
        title="Audit trail"
        actions={
          <a className="btn" href={`/api/audit/export${qs ? `?${qs}` : ""}`} download="audit-trail.ndjson">
            Download NDJSON
          </a>
        }
      >
        {resource ? (
          <>
            The history of {resource}
            {filters.environment_id ? ` in ${envName(filters.environment_id)}` : ""}, newest first.{" "}
            <Link to="/audit">Show every entry</Link>
          </>
        ) : admin ? (
          "Every change to the workspace and every sign-in, newest first."
        ) : (
          "Every change to the projects you administer, newest first."
        )}
      </PageHeader>
      {/* Keyed by the address: following a link replaces what was typed. */}
      <FilterForm key={qs} filters={filters} projects={projects.data ?? []} onApply={(f) => setParams(queryString(f))} />
      {admin && <VerifyChain from={filters.from} to={filters.to} />}
      {list.isPending ? (
        <Loading />
      ) : list.isError && entries.length === 0 ? (
        <ErrorBanner error={list.error} action="read the audit trail" />
      ) : entries.length === 0 ? (
        <Empty title="No entries">{qs ? <p>Nothing matches these filters.</p> : null}</Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table className="audit-table" aria-busy={list.isFetching || undefined}>
              <caption className="sr-only">Audit entries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Action</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Resource</th>
                  <th scope="col">Where</th>
                  <th scope="col">
                    <span className="sr-only">Details</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <EntryRow
                    key={e.id}
                    entry={e}
                    where={[projectName(e.project_id), envName(e.environment_id)].filter(Boolean).join(" · ")}
                  />
                ))}
              </tbody>
            </table>
          </div>
          {list.isError && <ErrorBanner error={list.error} action="read the audit trail" />}
          <div className="row">
            <span className="muted" role="status">
              {entries.length === 1 ? "1 entry" : `${entries.length} entries`}
              {list.hasNextPage ? ", more to load" : ""}
            </span>
            {list.hasNextPage && (
              <Button busy={list.isFetchingNextPage} onClick={() => void list.fetchNextPage()}>
                Load more
              </Button>
            )}
          </div>
        </>
      )}
    </div>
  );
}

function FilterForm({
  filters,
  projects,
  onApply,
}: {
  filters: Filters;
  projects: Schemas["Project"][];
  onApply: (f: Filters) => void;
}) {
  const [draft, setDraft] = useState<Filters>({
    ...filters,
    from: filters.from ? instantToLocal(filters.from) : "",
    to: filters.to ? instantToLocal(filters.to) : "",
  });
  const [problems, setProblems] = useState<Filters>({});
  const set = (k: keyof Filters) => (v: string) => setDraft((d) => ({ ...d, [k]: v }));
  const project = projects.find((p) => p.id === draft.project_id);

  // A time left as it was keeps the address's exact text.
  const instant = (k: "from" | "to") => {
    const local = draft[k] ?? "";
    if (!local) return "";
    if (filters[k] && instantToLocal(filters[k]) === local) return filters[k];
    return localToInstant(local);
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const next: Filters = { ...draft, from: instant("from"), to: instant("to") };
    for (const k of FILTERS) next[k] = next[k]?.trim();
    const errs: Filters = {};
    if (next.action && !ACTION_RE.test(next.action)) errs.action = "An action such as flag.updated, or flag.* for every action of a resource.";
    if (draft.from && !next.from) errs.from = "This time does not exist on this computer's clock.";
    if (draft.to && !next.to) errs.to = "This time does not exist on this computer's clock.";
    if (next.from && next.to && !errs.from && !errs.to && Date.parse(next.from) >= Date.parse(next.to)) errs.to = "Must be after From.";
    setProblems(errs);
    if (Object.keys(errs).length === 0) onApply(next);
  };

  return (
    <form className="card audit-filters" role="search" aria-label="Filter the audit trail" onSubmit={submit} noValidate>
      <Field label="Project">
        {(p) => (
          <select
            {...p}
            value={draft.project_id ?? ""}
            onChange={(e) => {
              const id = e.target.value;
              const keep = projects.find((x) => x.id === id)?.environments.some((x) => x.id === draft.environment_id);
              setDraft((d) => ({ ...d, project_id: id, environment_id: !id || keep ? d.environment_id : "" }));
            }}
          >
            <option value="">All projects</option>
            {projects.map((x) => (
              <option key={x.id} value={x.id}>
                {x.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Environment">
        {(p) => (
          <select {...p} value={draft.environment_id ?? ""} onChange={(e) => set("environment_id")(e.target.value)}>
            <option value="">All environments</option>
            {(project ? [project] : projects).map((x) => (
              <optgroup key={x.id} label={x.name}>
                {x.environments.map((env) => (
                  <option key={env.id} value={env.id}>
                    {env.name}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        )}
      </Field>
      <Field label="Actor" hint="An email, or a token's or key's prefix">
        {(p) => <input {...p} value={draft.actor ?? ""} onChange={(e) => set("actor")(e.target.value)} spellCheck={false} />}
      </Field>
      <Field label="Resource type">
        {(p) => (
          <select {...p} value={draft.resource_type ?? ""} onChange={(e) => set("resource_type")(e.target.value)}>
            <option value="">Any</option>
            {RESOURCE_TYPES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Resource ID" hint="A flag's or segment's key; otherwise its id">
        {(p) => <input {...p} value={draft.resource_id ?? ""} onChange={(e) => set("resource_id")(e.target.value)} spellCheck={false} />}
      </Field>
      <Field label="Action" hint="flag.updated, or member.* for all of a kind" error={problems.action}>
        {(p) => (
          <input {...p} list="audit-actions" value={draft.action ?? ""} onChange={(e) => set("action")(e.target.value)} spellCheck={false} />
        )}
      </Field>
      <datalist id="audit-actions">
        {RESOURCE_TYPES.map((r) => (
          <option key={r.value} value={`${r.value}.*`} />
        ))}
      </datalist>
      <Field label="From" hint="Your local time, inclusive" error={problems.from}>
        {(p) => <input {...p} type="datetime-local" step={1} value={draft.from ?? ""} onChange={(e) => set("from")(e.target.value)} />}
      </Field>
      <Field label="To" hint="Your local time, exclusive" error={problems.to}>
        {(p) => <input {...p} type="datetime-local" step={1} value={draft.to ?? ""} onChange={(e) => set("to")(e.target.value)} />}
      </Field>
      <div className="row audit-filter-actions">
        <Button type="submit" variant="primary">
          Apply filters
        </Button>
        {Object.keys(filters).length > 0 && <Link to="/audit">Clear filters</Link>}
      </div>
    </form>
  );
}

function VerifyChain({ from, to }: { from?: string; to?: string }) {
  const api = useApi();
  const verify = useMutation({
    mutationFn: () =>
      unwrap(api.GET("/api/audit/verify", { params: { query: { ...(from ? { from } : {}), ...(to ? { to } : {}) } } })),
  });
  const v = verify.data;
  return (
    <section className="audit-verify" aria-labelledby="audit-verify-title">
      <h2 id="audit-verify-title" className="sr-only">
        Verify the chain
      </h2>
      <div className="row">
        <Button busy={verify.isPending} onClick={() => verify.mutate()}>
          Verify chain
        </Button>
        <span className="muted">
          Recomputes every sealed entry's hash{from || to ? " in the chosen time range" : ""}: an entry changed, removed or
          added in the database by hand breaks the chain.
        </span>
      </div>
      <div role={v && !v.ok ? "alert" : "status"}>
        {v && (
          <dl className={`audit-verdict ${v.ok ? "audit-verdict-ok" : "audit-verdict-bad"}`}>
            <dt>Result</dt>
            <dd>{v.ok ? "The chain holds" : "The chain is broken"}</dd>
            <dt>Entries checked</dt>
            <dd>{v.checked}</dd>
            <dt>First bad entry</dt>
            <dd>{v.first_bad_id == null ? "none" : `#${v.first_bad_id}`}</dd>
          </dl>
        )}
      </div>
      <ErrorBanner error={verify.error} action="verify the audit trail" />
    </section>
  );
}

function EntryRow({ entry, where }: { entry: Entry; where: string }) {
  const [open, setOpen] = useState(false);
  const [onlyChanged, setOnlyChanged] = useState(true);
  const panelId = `audit-entry-${entry.id}`;
  const r = entry.resource;
  const before = asObject(entry.before);
  const after = asObject(entry.after);
  // A flag's and a segment's id is its key, a member's the user's id: their
  // history names the environment or the project.
  const keyed = r.type === "flag" || r.type === "segment";
  const history = historyPath(r.type, r.id, {
    environment_id: keyed ? (entry.environment_id ?? undefined) : undefined,
    project_id: r.type === "member" ? (entry.project_id ?? undefined) : undefined,
  });
  return (
    <Fragment>
      <tr>
        <td>
          <Time value={entry.at} />
        </td>
        <td>
          <span className={`pill ${verbClass(entry.action)}`}>{entry.action}</span>
        </td>
        <td className="audit-wrap">{actorSummary(entry.actor)}</td>
        <td className="audit-wrap">
          <span className="muted">{typeLabel(r.type)}</span> <Link to={history} aria-label={`History of ${typeLabel(r.type).toLowerCase()} ${resourceSummary(r)}`}>{resourceSummary(r)}</Link>
        </td>
        <td className="audit-wrap">{where || <span className="muted">workspace</span>}</td>
        <td>
          <button
            type="button"
            className="btn btn-secondary btn-small"
            aria-expanded={open}
            aria-controls={open ? panelId : undefined}
            aria-label={`Details of entry ${entry.id}`}
            onClick={() => setOpen(!open)}
          >
            Details
          </button>
        </td>
      </tr>
      {open && (
        <tr className="audit-expanded" id={panelId}>
          <td colSpan={6}>
            <div className="audit-details">
              <div className="audit-diff">
                {before || after ? (
                  <>
                    <label className="audit-check">
                      <input type="checkbox" checked={onlyChanged} onChange={(e) => setOnlyChanged(e.target.checked)} /> Only changed fields
                    </label>
                    <SideBySide leftTitle="Before" rightTitle="After" left={before} right={after} onlyChanged={onlyChanged} />
                  </>
                ) : (
                  <p className="muted">This entry records an event: there is no before or after.</p>
                )}
              </div>
              <dl className="audit-facts">
                <dt>Entry</dt>
                <dd>
                  #{entry.id}, {new Date(entry.at).toLocaleString()}
                </dd>
                <dt>Actor kind</dt>
                <dd>{entry.actor.kind}</dd>
                {entry.actor.email && (
                  <>
                    <dt>Email</dt>
                    <dd>{entry.actor.email}</dd>
                  </>
                )}
                {entry.actor.label && (
                  <>
                    <dt>{labelName(entry.actor.kind)}</dt>
                    <dd>
                      <code>{entry.actor.label}</code>
                    </dd>
                  </>
                )}
                {entry.actor.id && (
                  <>
                    <dt>Actor ID</dt>
                    <dd>
                      <code>{entry.actor.id}</code>
                    </dd>
                  </>
                )}
                <dt>IP address</dt>
                <dd>{entry.request.ip ?? "—"}</dd>
                <dt>User agent</dt>
                <dd>{entry.request.user_agent ?? "—"}</dd>
                <dt>Request ID</dt>
                <dd>{entry.request.request_id ? <code>{entry.request.request_id}</code> : "—"}</dd>
                <dt>Hash</dt>
                <dd>{entry.hash ? <code className="audit-hash">{entry.hash}</code> : "not sealed yet"}</dd>
              </dl>
            </div>
          </td>
        </tr>
      )}
    </Fragment>
  );
}
