// Segments of the current environment: reusable rule sets that flags
// reference with a segment_key rule. List, create, edit, delete, and which
// flags use each one (derived from the environment's flag list).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState, type FormEvent } from "react";
import { Link } from "react-router";
import { ApiError, fieldErrorOf, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ConfirmDialog, Empty, ErrorBanner, Field, Loading, Notice, PageHeader, Time } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { flagKeys } from "../../lib/stream";
import { KEY_PATTERN, keyFromName, OPERATORS, operatorLabel } from "../../lib/targeting";
import "../admin/admin.css";

type Segment = Schemas["Segment"];
type Rule = Schemas["TargetingRule"];
type Operator = Schemas["Operator"];

// segmentUsage maps each segment key to the keys of the flags whose rules reference it.
export function segmentUsage(flags: Schemas["Flag"][]): Map<string, string[]> {
  const usage = new Map<string, string[]>();
  for (const f of flags) {
    const seen = new Set<string>();
    for (const r of f.rules) {
      const k = r.segment_key;
      if (k && !seen.has(k)) {
        seen.add(k);
        usage.set(k, [...(usage.get(k) ?? []), f.key]);
      }
    }
  }
  return usage;
}

// parseValues splits the comma-separated values field, dropping blanks.
export function parseValues(text: string): string[] {
  return text
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

export function ruleSummary(r: Rule): string {
  if (r.segment_key) return `in segment ${r.segment_key}`;
  return `${r.attribute ?? "?"} ${r.operator ? operatorLabel(r.operator) : "?"} ${(r.values ?? []).join(", ")}`;
}

export default function Segments() {
  const api = useApi();
  const qc = useQueryClient();
  const { projectId, envId, env } = useScope();
  const segKey = ["segments", envId] as const;
  const segments = useQuery({
    queryKey: segKey,
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/segments", { params: { path: { env_id: envId } } })),
    enabled: Boolean(envId),
  });
  // The environment's flag list (kept live by the shell's stream) tells which flags use a segment.
  const flags = useQuery({
    queryKey: flagKeys.list(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flags", { params: { path: { env_id: envId } } })),
    enabled: Boolean(envId),
  });
  // Project admins can read the environment's approval policy; for others this quietly fails.
  const environments = useQuery({
    queryKey: ["environments", projectId],
    queryFn: () =>
      unwrap(api.GET("/api/projects/{project_id}/environments", { params: { path: { project_id: projectId } } })),
    enabled: Boolean(projectId),
    retry: false,
  });
  const locked = environments.data?.find((e) => e.id === envId)?.require_approval ?? false;
  const usage = useMemo(() => segmentUsage(flags.data ?? []), [flags.data]);
  const [editing, setEditing] = useState<Segment | "new" | null>(null);
  const [deleting, setDeleting] = useState<Segment | null>(null);
  const [filter, setFilter] = useState("");
  const [status, setStatus] = useState("");

  const remove = useMutation({
    mutationFn: (s: Segment) =>
      unwrap(api.DELETE("/api/environments/{env_id}/segments/{key}", { params: { path: { env_id: envId, key: s.key } } })),
    onSuccess: (_d, s) => {
      setDeleting(null);
      setStatus(`Deleted segment ${s.key}.`);
      void qc.invalidateQueries({ queryKey: segKey });
      void qc.invalidateQueries({ queryKey: flagKeys.list(envId) });
    },
  });

  const q = filter.trim().toLowerCase();
  const rows = (segments.data ?? []).filter(
    (s) => !q || s.key.toLowerCase().includes(q) || s.name.toLowerCase().includes(q) || (s.description ?? "").toLowerCase().includes(q),
  );

  return (
    <div className="admin-page">
      <PageHeader
        title="Segments"
        actions={
          <Button variant="primary" onClick={() => setEditing("new")} disabled={editing !== null || locked}>
            New segment
          </Button>
        }
      >
        Reusable groups of users{env ? ` in ${env.name}` : ""}. Flags target them with an “in segment” rule; a user is in a
        segment when any of its rules matches.
      </PageHeader>
      {status && <Notice kind="success">{status}</Notice>}
      {locked && (
        <Notice kind="warning">
          {env?.name ?? "This environment"} requires approval: segments cannot be created, edited or deleted here until the
          requirement is turned off in Environments.
        </Notice>
      )}

      {editing && (
        <SegmentEditor
          envId={envId}
          segment={editing === "new" ? undefined : editing}
          usedBy={editing === "new" ? [] : (usage.get(editing.key) ?? [])}
          onClose={() => setEditing(null)}
          onSaved={(s, created) => {
            setEditing(null);
            setStatus(created ? `Created segment ${s.key}.` : `Saved segment ${s.key}.`);
          }}
        />
      )}

      {segments.isPending && envId ? (
        <Loading />
      ) : segments.error ? (
        <ErrorBanner action="change segments in this environment" error={segments.error} />
      ) : (segments.data ?? []).length === 0 ? (
        <Empty title="No segments yet">
          Group users once (beta testers, internal staff, a set of countries) and reuse the group in every flag.
        </Empty>
      ) : (
        <>
          <div className="row" style={{ marginBottom: 8 }}>
            <input
              type="search"
              aria-label="Filter segments"
              placeholder="Filter by key, name or description"
              value={filter}
              onChange={(e) => setFilter(e.target.value)}
            />
            <span className="muted" role="status">
              {rows.length} of {segments.data?.length ?? 0}
            </span>
          </div>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Segment</th>
                  <th scope="col">Rules</th>
                  <th scope="col">Used by</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((s) => {
                  const used = usage.get(s.key) ?? [];
                  return (
                    <tr key={s.id}>
                      <th scope="row">
                        <div>{s.name}</div>
                        <code className="muted">{s.key}</code>
                        {s.description && <div className="muted segment-desc">{s.description}</div>}
                      </th>
                      <td>
                        {s.rules.length === 0 ? (
                          <span className="muted">No rules (matches nobody)</span>
                        ) : (
                          <ul className="rule-list">
                            {s.rules.slice(0, 3).map((r, i) => (
                              <li key={i}>
                                <code>{ruleSummary(r)}</code>
                              </li>
                            ))}
                            {s.rules.length > 3 && <li className="muted">+{s.rules.length - 3} more</li>}
                          </ul>
                        )}
                      </td>
                      <td>
                        {flags.isPending ? (
                          <span className="muted">…</span>
                        ) : used.length === 0 ? (
                          <span className="muted">No flags</span>
                        ) : (
                          used.map((k) => (
                            <Link key={k} className="tag" to={envPath(projectId, envId, `flags/${encodeURIComponent(k)}`)}>
                              {k}
                            </Link>
                          ))
                        )}
                      </td>
                      <td>
                        <Time value={s.created_at} />
                      </td>
                      <td className="actions-cell">
                        <Button className="btn-small" aria-label={`Edit ${s.key}`} onClick={() => setEditing(s)} disabled={editing !== null || locked}>
                          Edit
                        </Button>{" "}
                        <Button
                          className="btn-small"
                          variant="danger"
                          aria-label={`Delete ${s.key}`}
                          disabled={locked}
                          onClick={() => {
                            remove.reset();
                            setDeleting(s);
                          }}
                        >
                          Delete
                        </Button>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
      {deleting && (
        <ConfirmDialog
          action="change segments in this environment"
          title={`Delete segment ${deleting.key}?`}
          confirmLabel="Delete segment"
          busy={remove.isPending}
          error={remove.error}
          onConfirm={() => remove.mutate(deleting)}
          onClose={() => setDeleting(null)}
        >
          {(usage.get(deleting.key) ?? []).length > 0 ? (
            <p className="banner banner-warning">
              Used by {(usage.get(deleting.key) ?? []).join(", ")}. Those flags keep running without this segment&apos;s
              rules: users it matched fall through to the flags&apos; other rules.
            </p>
          ) : (
            <p>No flag uses this segment.</p>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}

type DraftRule = { attribute: string; operator: Operator; values: string; base: Rule };

function toDraft(r: Rule): DraftRule {
  return { attribute: r.attribute ?? "", operator: r.operator ?? "equals", values: (r.values ?? []).join(", "), base: r };
}

// onlyConditions reports a rule that tests nothing but its conditions
// (extensions.md §2): it writes no top-level attribute, operator or values.
function onlyConditions(d: DraftRule): boolean {
  return (d.base.conditions?.length ?? 0) > 0 && !d.attribute.trim() && parseValues(d.values).length === 0;
}

export function fromDraft(d: DraftRule): Rule {
  if (onlyConditions(d)) {
    const { attribute: _a, operator: _o, values: _v, ...rest } = d.base;
    return rest;
  }
  return { ...d.base, attribute: d.attribute.trim(), operator: d.operator, values: parseValues(d.values) };
}

function SegmentEditor({
  envId,
  segment,
  usedBy,
  onClose,
  onSaved,
}: {
  envId: string;
  segment?: Segment;
  usedBy: string[];
  onClose: () => void;
  onSaved: (s: Segment, created: boolean) => void;
}) {
  const api = useApi();
  const qc = useQueryClient();
  const [name, setName] = useState(segment?.name ?? "");
  const [key, setKey] = useState(segment?.key ?? "");
  const [keyEdited, setKeyEdited] = useState(Boolean(segment));
  const [description, setDescription] = useState(segment?.description ?? "");
  const [rules, setRules] = useState<DraftRule[]>(
    segment ? segment.rules.map(toDraft) : [{ attribute: "", operator: "equals", values: "", base: {} }],
  );
  const [local, setLocal] = useState<Record<string, string>>({});
  const effectiveKey = keyEdited ? key : keyFromName(name);

  const save = useMutation({
    mutationFn: () => {
      const body = { name: name.trim(), description: description.trim() || null, rules: rules.map(fromDraft) };
      return segment
        ? unwrap(api.PATCH("/api/environments/{env_id}/segments/{key}", { params: { path: { env_id: envId, key: segment.key } }, body }))
        : unwrap(api.POST("/api/environments/{env_id}/segments", { params: { path: { env_id: envId } }, body: { ...body, key: effectiveKey } }));
    },
    onSuccess: (s) => {
      void qc.invalidateQueries({ queryKey: ["segments", envId] });
      void qc.invalidateQueries({ queryKey: flagKeys.list(envId) });
      onSaved(s, !segment);
    },
  });

  const err = save.error;
  const fe = (f: string) =>
    local[f] ?? fieldErrorOf(err, f) ?? (f === "key" && err instanceof ApiError && err.status === 409 && !segment && /already exists/.test(err.message) ? err.message : undefined);

  const setRule = (i: number, patch: Partial<DraftRule>) => setRules((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const errs: Record<string, string> = {};
    if (!name.trim()) errs.name = "Enter a name.";
    if (!segment && !KEY_PATTERN.test(effectiveKey)) errs.key = "1 to 100 letters, digits, underscores or hyphens.";
    rules.forEach((r, i) => {
      if (r.base.segment_key || onlyConditions(r)) return;
      if (!r.attribute.trim()) errs[`rules.${i}.attribute`] = "Enter an attribute.";
      if (parseValues(r.values).length === 0) errs[`rules.${i}.values`] = "Enter at least one value.";
    });
    setLocal(errs);
    if (Object.keys(errs).length === 0) save.mutate();
  };

  const shownInFields = (error: unknown) =>
    error instanceof ApiError && error.details.length > 0 && error.details.every((d) => /^(name|key|description|rules)/.test(d.field));

  return (
    <section className="card admin-section" aria-labelledby="segment-editor">
      <h2 id="segment-editor">{segment ? `Edit ${segment.key}` : "New segment"}</h2>
      {segment && usedBy.length > 0 && (
        <Notice kind="warning">Saving changes who gets which value in {usedBy.join(", ")} right away.</Notice>
      )}
      <form onSubmit={submit} noValidate>
        <div className="grid-2">
          <Field label="Name" error={fe("name")}>
            {(p) => <input {...p} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. Beta testers" />}
          </Field>
          <Field label="Key" hint={segment ? "Keys cannot change" : "Flags reference the segment by this key"} error={fe("key")}>
            {(p) => (
              <input
                {...p}
                value={effectiveKey}
                readOnly={Boolean(segment)}
                onChange={(e) => {
                  setKeyEdited(true);
                  setKey(e.target.value);
                }}
              />
            )}
          </Field>
        </div>
        <Field label="Description" error={fe("description")}>
          {(p) => <textarea {...p} rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>

        <fieldset className="rules-fieldset">
          <legend>Rules — a user is in the segment when any rule matches</legend>
          {rules.length === 0 && <p className="muted">No rules: the segment matches nobody.</p>}
          {rules.map((r, i) => (
            <div className="rule-row" key={i} role="group" aria-label={`Rule ${i + 1}`}>
              {r.base.segment_key ? (
                <p className="muted" style={{ gridColumn: "1 / 4" }}>
                  References segment {r.base.segment_key} (not allowed in segments; remove it)
                </p>
              ) : (
                <>
                  <Field label="Attribute" error={fe(`rules.${i}.attribute`)}>
                    {(p) => <input {...p} value={r.attribute} onChange={(e) => setRule(i, { attribute: e.target.value })} placeholder="e.g. country" />}
                  </Field>
                  <Field label="Operator" error={fe(`rules.${i}.operator`)}>
                    {(p) => (
                      <select {...p} value={r.operator} onChange={(e) => setRule(i, { operator: e.target.value as Operator })}>
                        {OPERATORS.map((o) => (
                          <option key={o.value} value={o.value}>
                            {o.label}
                          </option>
                        ))}
                      </select>
                    )}
                  </Field>
                  <Field label="Values" hint="Comma-separated; any one matching counts" error={fe(`rules.${i}.values`) ?? fe(`rules.${i}`)}>
                    {(p) => <input {...p} value={r.values} onChange={(e) => setRule(i, { values: e.target.value })} placeholder="e.g. US, CA" />}
                  </Field>
                </>
              )}
              <Button
                variant="ghost"
                className="btn-small rule-remove"
                aria-label={`Remove rule ${i + 1}`}
                onClick={() => setRules((rs) => rs.filter((_, j) => j !== i))}
              >
                Remove
              </Button>
            </div>
          ))}
          <Button className="btn-small" onClick={() => setRules((rs) => [...rs, { attribute: "", operator: "equals", values: "", base: {} }])}>
            Add rule
          </Button>
        </fieldset>

        {err && !shownInFields(err) && !fe("key") && <ErrorBanner action="change segments in this environment" error={err} />}
        <div className="row" style={{ marginTop: 12 }}>
          <Button type="submit" variant="primary" busy={save.isPending}>
            {segment ? "Save segment" : "Create segment"}
          </Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </section>
  );
}
