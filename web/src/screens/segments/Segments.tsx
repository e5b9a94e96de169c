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
import { KEY_PATTERN, keyFromName, operatorLabel } from "../../lib/targeting";
import { apiFieldErrors, conditionsOf, emptyRule, parseLoose, ruleToForm, type FieldErrors, type RuleForm } from "../flags/flagform";
import { ConditionRows } from "../flags/RuleConditions";
import "../admin/admin.css";

type Segment = Schemas["Segment"];
type Rule = Schemas["TargetingRule"];

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

// ruleSummary reads a rule in one line: its conditions joined by "and".
export function ruleSummary(r: Rule): string {
  if (r.segment_key) return `in segment ${r.segment_key}`;
  const parts = [
    ...(r.attribute ? [{ attribute: r.attribute, operator: r.operator, values: r.values ?? [] }] : []),
    ...(r.conditions ?? []),
  ].map((c) => `${c.attribute} ${c.operator ? operatorLabel(c.operator) : "?"} ${c.values.join(", ")}`);
  return parts.length > 0 ? parts.join(" and ") : "no condition";
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

// segmentRuleOf writes one rule of a segment from the editor and collects
// client-side problems under the API's paths. Segments are untyped, so a
// rule's optional value is read loosely (JSON when it parses, else text).
export function segmentRuleOf(r: RuleForm, i: number, errors: FieldErrors): Rule {
  const field = `rules.${i}`;
  const rule: Rule = { ...r.extra };
  if (r.kind === "segment") rule.segment_key = r.segment_key; // not allowed in segments: the server says so
  Object.assign(rule, conditionsOf(r, field, errors));
  const variant = parseLoose(r.variant);
  if (variant !== undefined) rule.variant = variant;
  return rule;
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
  const [rules, setRules] = useState<RuleForm[]>(segment ? segment.rules.map((r) => ruleToForm(r)) : [emptyRule()]);
  const [local, setLocal] = useState<Record<string, string>>({});
  const effectiveKey = keyEdited ? key : keyFromName(name);

  const save = useMutation({
    mutationFn: () => {
      const body = { name: name.trim(), description: description.trim() || null, rules: rules.map((r, i) => segmentRuleOf(r, i, {})) };
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

  const setRule = (i: number, patch: Partial<RuleForm>) => setRules((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  // The server's 422 details by field, then this form's own checks.
  const ruleErrors: FieldErrors = { ...apiFieldErrors(err), ...local };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const errs: Record<string, string> = {};
    if (!name.trim()) errs.name = "Enter a name.";
    if (!segment && !KEY_PATTERN.test(effectiveKey)) errs.key = "1 to 100 letters, digits, underscores or hyphens.";
    rules.forEach((r, i) => segmentRuleOf(r, i, errs));
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
          {rules.map((r, i) => {
            const path = `rules.${i}`;
            const head = [ruleErrors[path], ruleErrors[`${path}.conditions`], ruleErrors[`${path}.segment_key`]].filter(Boolean).join("; ");
            return (
              <div className="segment-rule" key={r.id} role="group" aria-label={`Rule ${i + 1}`}>
                <div className="rule-head">
                  <strong>Rule {i + 1}</strong>
                  <Button variant="ghost" className="btn-small rule-remove" onClick={() => setRules((rs) => rs.filter((_, j) => j !== i))}>
                    Remove<span className="sr-only"> rule {i + 1}</span>
                  </Button>
                </div>
                {r.kind === "segment" && (
                  <p className="muted">References segment {r.segment_key} (not allowed in segments; remove it)</p>
                )}
                {head && (
                  <div className="field-error" role="alert">
                    {head}
                  </div>
                )}
                <ConditionRows
                  rule={r}
                  field={path}
                  errors={ruleErrors}
                  label={`Rule ${i + 1}`}
                  onChange={(patch) => setRule(i, patch)}
                  empty={<p className="muted">No condition: add one.</p>}
                />
                <Field
                  label={<><span className="sr-only">Rule {i + 1} </span>Serves (optional)</>}
                  hint="Blank: each flag's own rule value. Otherwise this value, in every flag that uses the segment (JSON, or plain text for a string)."
                  error={ruleErrors[`${path}.variant`]}
                >
                  {(p) => <input {...p} value={r.variant} className="segment-variant" onChange={(e) => setRule(i, { variant: e.target.value })} />}
                </Field>
              </div>
            );
          })}
          <Button className="btn-small" onClick={() => setRules((rs) => [...rs, emptyRule()])}>
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
