// Audit log: every flag write in the environment, newest first, with a
// before/after comparison per entry. Filters live in the URL so links work.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { SideBySide, changedKeys } from "../../components/diff";
import { Button, Empty, ErrorBanner, Field, Loading, PageHeader, Time } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { flagKeys } from "../../lib/stream";
import { asRecord, formatDateTime } from "./shared";
import "./governance.css";

type Entry = Schemas["AuditEntry"];
const PAGE_SIZES = [25, 50, 100, 200];
const IGNORED = ["environment_id", "created_at"];

export const auditKeys = {
  list: (envId: string, flag: string, limit: number, offset: number) => ["audit", envId, flag, limit, offset] as const,
};

// sourceLabel explains where a write came from (metadata.source and friends).
export function sourceLabel(metadata: unknown, envName: (id: string) => string | undefined): string {
  const m = asRecord(metadata);
  const source = typeof m?.source === "string" ? m.source : "";
  if (source === "change_request") {
    return m?.change_request_id != null ? `change request #${String(m.change_request_id)}` : "change request";
  }
  if (source === "schedule") return "scheduled change";
  if (typeof m?.source_environment_id === "string") {
    const from = envName(m.source_environment_id) ?? m.source_environment_id.slice(0, 8);
    return `${source || "api"} (from ${from})`;
  }
  return source || "—";
}

export default function Audit() {
  const api = useApi();
  const { projectId, envId, env, project } = useScope();
  const [params, setParams] = useSearchParams();
  const flag = params.get("flag") ?? "";
  const limit = PAGE_SIZES.includes(Number(params.get("limit"))) ? Number(params.get("limit")) : 50;
  const page = Math.max(0, Math.floor(Number(params.get("page")) || 0));
  const offset = page * limit;
  const [flagInput, setFlagInput] = useState(flag);

  const update = (next: { flag?: string; limit?: number; page?: number }) => {
    const p = new URLSearchParams();
    const f = next.flag ?? flag;
    const l = next.limit ?? limit;
    const pg = next.page ?? 0;
    if (f) p.set("flag", f);
    if (l !== 50) p.set("limit", String(l));
    if (pg > 0) p.set("page", String(pg));
    setParams(p);
  };

  const list = useQuery({
    queryKey: auditKeys.list(envId, flag, limit, offset),
    queryFn: () =>
      unwrap(
        api.GET("/api/environments/{env_id}/audit", {
          params: { path: { env_id: envId }, query: { ...(flag ? { flag_key: flag } : {}), limit, offset } },
        }),
      ),
    enabled: !!envId,
    placeholderData: keepPreviousData,
  });
  const flags = useQuery({
    queryKey: flagKeys.list(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flags", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });
  const envName = (id: string) => project?.environments.find((e) => e.id === id)?.name;
  const entries = list.data ?? [];
  const hasNext = entries.length === limit;

  return (
    <div className="stack gov">
      <PageHeader title="Audit log">Every flag write{env ? ` in ${env.name}` : ""}, newest first.</PageHeader>
      <form
        className="row gov-filters"
        role="search"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          update({ flag: flagInput.trim() });
        }}
      >
        <Field label="Flag key">
          {(p) => (
            <input {...p} list="audit-flag-keys" value={flagInput} onChange={(e) => setFlagInput(e.target.value)} placeholder="All flags (exact key)" />
          )}
        </Field>
        <datalist id="audit-flag-keys">
          {(flags.data ?? []).map((f) => (
            <option key={f.key} value={f.key} />
          ))}
        </datalist>
        <Button type="submit">Apply</Button>
        {flag && (
          <Button
            variant="ghost"
            onClick={() => {
              setFlagInput("");
              update({ flag: "" });
            }}
          >
            Clear filter
          </Button>
        )}
        <Field label="Per page">
          {(p) => (
            <select {...p} value={limit} onChange={(e) => update({ limit: Number(e.target.value) })}>
              {PAGE_SIZES.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          )}
        </Field>
      </form>
      {list.isPending ? (
        <Loading />
      ) : list.isError ? (
        <ErrorBanner error={list.error} action="view the audit log of this environment" />
      ) : entries.length === 0 ? (
        <Empty title={page > 0 ? "No more entries" : "No audit entries"}>
          {flag && <p>Nothing recorded for {flag}.</p>}
        </Empty>
      ) : (
        <div className="table-wrap">
          <table className="gov-table" aria-busy={list.isFetching || undefined}>
            <caption className="sr-only">
              Audit entries {offset + 1} to {offset + entries.length}
              {flag ? ` for ${flag}` : ""}
            </caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Flag</th>
                <th scope="col">Source</th>
                <th scope="col">Changed</th>
                <th scope="col">
                  <span className="sr-only">Details</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <AuditRow
                  key={e.id}
                  entry={e}
                  source={sourceLabel(e.metadata, envName)}
                  flagHref={envPath(projectId, envId, `flags/${encodeURIComponent(e.flag_key)}`)}
                  onFilter={() => {
                    setFlagInput(e.flag_key);
                    update({ flag: e.flag_key });
                  }}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(page > 0 || hasNext) && (
        <nav className="row" aria-label="Audit pages">
          <Button disabled={page === 0} onClick={() => update({ page: page - 1 })}>
            Newer
          </Button>
          <span className="muted" role="status">
            Entries {entries.length ? offset + 1 : offset}–{offset + entries.length}
          </span>
          <Button disabled={!hasNext} onClick={() => update({ page: page + 1 })}>
            Older
          </Button>
        </nav>
      )}
    </div>
  );
}

function AuditRow({
  entry,
  source,
  flagHref,
  onFilter,
}: {
  entry: Entry;
  source: string;
  flagHref: string;
  onFilter: () => void;
}) {
  const [open, setOpen] = useState(false);
  const [onlyChanged, setOnlyChanged] = useState(true);
  const before = asRecord(entry.before_data);
  const after = asRecord(entry.after_data);
  const changed = changedKeys(before, after, [...IGNORED, "version", "updated_at"]);
  const panelId = `audit-${entry.id}-diff`;
  const actionPill =
    entry.action === "delete" ? "pill-danger" : entry.action === "create" ? "pill-success" : entry.action === "archive" ? "pill-warning" : "";
  return (
    <Fragment>
      <tr>
        <td>
          <Time value={entry.created_at} />
          <div className="muted gov-sub">{formatDateTime(entry.created_at)}</div>
        </td>
        <td>{entry.actor_email}</td>
        <td>
          <span className={`pill ${actionPill}`}>{entry.action}</span>
        </td>
        <td>
          <Link to={flagHref}>
            <code>{entry.flag_key}</code>
          </Link>{" "}
          <button type="button" className="btn btn-ghost btn-small" onClick={onFilter} aria-label={`Filter to ${entry.flag_key}`}>
            Filter
          </button>
        </td>
        <td>{source}</td>
        <td className="gov-wrap">
          {!before && after ? (
            <span className="muted">new flag</span>
          ) : before && !after ? (
            <span className="muted">flag removed</span>
          ) : changed.length === 0 ? (
            <span className="muted">—</span>
          ) : (
            changed.slice(0, 4).join(", ") + (changed.length > 4 ? ` +${changed.length - 4}` : "")
          )}
        </td>
        <td>
          <button
            type="button"
            className="btn btn-secondary btn-small"
            aria-expanded={open}
            aria-controls={open ? panelId : undefined}
            onClick={() => setOpen(!open)}
          >
            Show diff
          </button>
        </td>
      </tr>
      {open && (
        <tr className="gov-expanded" id={panelId}>
          <td colSpan={7}>
            <div className="stack">
              <label className="gov-check">
                <input type="checkbox" checked={onlyChanged} onChange={(e) => setOnlyChanged(e.target.checked)} /> Only
                changed fields
              </label>
              <SideBySide
                leftTitle="Before"
                rightTitle="After"
                left={before}
                right={after}
                ignore={IGNORED}
                onlyChanged={onlyChanged}
              />
            </div>
          </td>
        </tr>
      )}
    </Fragment>
  );
}
