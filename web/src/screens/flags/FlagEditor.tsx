import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState, type DragEvent, type FormEvent, type ReactNode } from "react";
import { Link, useLocation, useNavigate, useParams } from "react-router";
import { unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { HistoryLink } from "../../components/history";
import { Button, ConfirmDialog, ErrorBanner, Field, Loading, Notice, PageHeader, Time, Toggle } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { flagKeys } from "../../lib/stream";
import { ApprovalRequiredNotice, ChangeRequestNotice, patchFlag } from "./common";
import { LastSevenDays } from "./FlagStatus";
import { ReleasePanel } from "../releases/ReleasePanel";
import { ConditionRows } from "./RuleConditions";
import {
  FLAG_TYPES,
  apiFieldErrors,
  emptyForm,
  emptyPrereq,
  emptyRule,
  emptySegmentRule,
  emptyVariant,
  errorAt,
  flagToForm,
  formToInput,
  moveItem,
  newId,
  patchFrom,
  rowPath,
  weightSummary,
  type ChangeRequest,
  type FieldErrors,
  type Flag,
  type FlagForm,
  type FlagType,
  type RuleForm,
  type VariantForm,
} from "./flagform";
import "./flags.css";

type Status = { kind: "saved"; text: string } | { kind: "change_request"; cr: ChangeRequest } | null;

// ValueInput edits one flag value as text, shaped by the flag's type.
function ValueInput({
  type,
  value,
  onChange,
  placeholder,
  ...aria
}: {
  type: FlagType;
  value: string;
  onChange: (v: string) => void;
  placeholder?: string;
  id?: string;
  "aria-describedby"?: string;
  "aria-invalid"?: boolean;
  "aria-label"?: string;
}) {
  if (type === "boolean") {
    return (
      <select {...aria} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  }
  if (type === "json") {
    return (
      <textarea
        {...aria}
        className="mono"
        rows={2}
        value={value}
        placeholder={placeholder ?? '{"key": "value"}'}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  }
  return (
    <input
      {...aria}
      type="text"
      inputMode={type === "integer" ? "numeric" : undefined}
      value={value}
      placeholder={placeholder}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}

function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  const id = useId();
  return (
    <section className="card editor-section" aria-labelledby={id}>
      <div className="section-head">
        <h2 id={id}>{title}</h2>
        {actions && <div className="row">{actions}</div>}
      </div>
      {children}
    </section>
  );
}

export default function FlagEditor() {
  const api = useApi();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const location = useLocation();
  const { key: routeKey } = useParams();
  const isNew = !routeKey;
  const { projectId, envId, env } = useScope();

  const flag = useQuery({
    queryKey: flagKeys.one(envId, routeKey ?? ""),
    queryFn: () =>
      unwrap(api.GET("/api/environments/{env_id}/flags/{key}", { params: { path: { env_id: envId, key: routeKey ?? "" } } })),
    enabled: !isNew && !!envId,
  });
  const flagList = useQuery({
    queryKey: flagKeys.list(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flags", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });
  const segments = useQuery({
    queryKey: ["segments", envId],
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/segments", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });

  const [form, setForm] = useState<FlagForm>(emptyForm);
  const [base, setBase] = useState<Flag | null>(null); // the server flag the form started from
  const [dirty, setDirty] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [status, setStatus] = useState<Status>(() =>
    (location.state as { created?: string } | null)?.created
      ? { kind: "saved", text: `Flag ${(location.state as { created: string }).created} created.` }
      : null,
  );
  const [confirmDelete, setConfirmDelete] = useState(false);
  const statusRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (status) statusRef.current?.scrollIntoView?.({ block: "nearest" });
  }, [status]);
  const [dragFrom, setDragFrom] = useState<number | null>(null);
  const [tagDraft, setTagDraft] = useState("");
  const clientSideHint = useId();

  // Load the flag; later server versions replace the form only when it has no unsaved edits.
  const server = flag.data;
  useEffect(() => {
    if (!server) return;
    if (!base || (server.version !== base.version && !dirty) || server.key !== base.key) {
      setForm(flagToForm(server));
      setBase(server);
      setDirty(false);
    }
  }, [server, base, dirty]);
  const staleBy = server && base && server.version !== base.version && dirty ? server : null;

  const update = (fn: (f: FlagForm) => FlagForm) => {
    setForm(fn);
    setDirty(true);
  };
  const set = <K extends keyof FlagForm>(k: K, v: FlagForm[K]) => update((f) => ({ ...f, [k]: v }));
  const setRule = (i: number, patch: Partial<RuleForm>) =>
    update((f) => ({ ...f, rules: f.rules.map((r, j) => (j === i ? { ...r, ...patch } : r)) }));
  const moveRule = (from: number, to: number) => {
    update((f) => ({ ...f, rules: moveItem(f.rules, from, to) }));
    setErrors({}); // index-keyed messages no longer point at the right rule
  };

  const save = useMutation({
    mutationFn: async (input: ReturnType<typeof formToInput>["input"]) => {
      if (isNew) {
        const created = await unwrap(
          api.POST("/api/environments/{env_id}/flags", { params: { path: { env_id: envId } }, body: input }),
        );
        return { kind: "created" as const, flag: created };
      }
      if (!base) throw new Error("the flag is not loaded yet");
      const patch = patchFrom(base, input);
      if (Object.keys(patch).length === 0) return { kind: "unchanged" as const };
      return patchFlag(api, envId, base.key, patch);
    },
    onMutate: () => {
      setStatus(null);
    },
    onSuccess: (res) => {
      setErrors({});
      if (res.kind === "created") {
        // The router keeps this editor mounted from flags/new to flags/:key
        // (same element), so the initial state that reads the location's
        // `created` runs only when the page is opened afresh: say it here.
        setStatus({ kind: "saved", text: `Flag ${res.flag.key} created.` });
        queryClient.setQueryData(flagKeys.one(envId, res.flag.key), res.flag);
        void queryClient.invalidateQueries({ queryKey: flagKeys.list(envId), exact: true });
        navigate(envPath(projectId, envId, `flags/${encodeURIComponent(res.flag.key)}`), {
          replace: true,
          state: { created: res.flag.key },
        });
      } else if (res.kind === "unchanged") {
        setStatus({ kind: "saved", text: "No changes to save." });
        setDirty(false);
      } else if (res.kind === "flag") {
        queryClient.setQueryData(flagKeys.one(envId, res.flag.key), res.flag);
        void queryClient.invalidateQueries({ queryKey: flagKeys.list(envId), exact: true });
        setForm(flagToForm(res.flag));
        setBase(res.flag);
        setDirty(false);
        setStatus({ kind: "saved", text: `Saved — version ${res.flag.version}.` });
      } else {
        setStatus({ kind: "change_request", cr: res.changeRequest });
      }
    },
    onError: (err) => setErrors(apiFieldErrors(err)),
  });

  const archive = useMutation({
    mutationFn: async (to: "archive" | "unarchive") => {
      const path = { env_id: envId, key: base?.key ?? "" };
      return to === "archive"
        ? unwrap(api.POST("/api/environments/{env_id}/flags/{key}/archive", { params: { path } }))
        : unwrap(api.POST("/api/environments/{env_id}/flags/{key}/unarchive", { params: { path } }));
    },
    onSuccess: (f) => {
      setBase(f); // archiving touches no form field: keep any edits
      queryClient.setQueryData(flagKeys.one(envId, f.key), f);
      void queryClient.invalidateQueries({ queryKey: flagKeys.list(envId), exact: true });
      setStatus({ kind: "saved", text: f.archived_at ? "Flag archived." : "Flag unarchived." });
    },
  });

  const remove = useMutation({
    mutationFn: () =>
      unwrap(api.DELETE("/api/environments/{env_id}/flags/{key}", { params: { path: { env_id: envId, key: base?.key ?? "" } } })),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: flagKeys.one(envId, base?.key ?? "") });
      void queryClient.invalidateQueries({ queryKey: flagKeys.list(envId), exact: true });
      navigate(envPath(projectId, envId, "flags"));
    },
    onSettled: () => setConfirmDelete(false),
  });

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const types = Object.fromEntries((flagList.data ?? []).map((f) => [f.key, f.flag_type]));
    const { input, errors: local } = formToInput(isNew ? form : { ...form, key: base?.key ?? form.key }, types);
    setErrors(local);
    if (Object.keys(local).length > 0) {
      setStatus(null);
      return;
    }
    save.mutate(input);
  };

  if (!isNew && flag.isPending) return <Loading label="Loading flag…" />;
  if (!isNew && flag.error && !base) {
    return (
      <div>
        <PageHeader title={routeKey} />
        <ErrorBanner error={flag.error} action="view this flag" />
        <Link to={envPath(projectId, envId, "flags")}>Back to flags</Link>
      </div>
    );
  }

  const t = form.flag_type;
  const weights = weightSummary(form.variants);
  const otherFlags = (flagList.data ?? []).filter((f) => f.key !== (base?.key ?? form.key));
  const errorCount = Object.keys(errors).length;

  return (
    <form className="flag-editor" onSubmit={onSubmit} noValidate>
      <PageHeader
        title={isNew ? "New flag" : <code>{base?.key}</code>}
        actions={
          !isNew &&
          base && (
            <>
              <HistoryLink type="flag" id={base.key} within={{ environment_id: envId }} projectId={projectId} of={base.key} small={false} />
              <Button
                busy={archive.isPending}
                onClick={() => archive.mutate(base.archived_at ? "unarchive" : "archive")}
              >
                {base.archived_at ? "Unarchive" : "Archive"}
              </Button>
              <Button variant="danger" onClick={() => setConfirmDelete(true)}>
                Delete
              </Button>
            </>
          )
        }
      >
        <Link to={envPath(projectId, envId, "flags")}>← Flags</Link>
        {env && <> · {env.name}</>}
        {base && (
          <>
            {" "}
            · version {base.version} · updated <Time value={base.updated_at} />
            {base.archived_at && (
              <>
                {" "}
                <span className="pill pill-warning">archived</span>
              </>
            )}
          </>
        )}
      </PageHeader>
      {!isNew && <ApprovalRequiredNotice env={env} projectId={projectId} />}

      <div aria-live="polite" ref={statusRef}>
        {status?.kind === "saved" && <Notice kind="success">{status.text}</Notice>}
        {status?.kind === "change_request" && <ChangeRequestNotice cr={status.cr} projectId={projectId} envId={envId} />}
        {staleBy && (
          <Notice kind="warning">
            Someone changed this flag (now version {staleBy.version}) while you were editing. Saving sends only your changed
            fields.{" "}
            <Button
              className="btn-small"
              onClick={() => {
                setForm(flagToForm(staleBy));
                setBase(staleBy);
                setDirty(false);
              }}
            >
              Discard my edits and load version {staleBy.version}
            </Button>
          </Notice>
        )}
      </div>
      {errorCount > 0 && !save.error && (
        <div className="banner banner-error" role="alert">
          Fix the {errorCount} highlighted field{errorCount > 1 ? "s" : ""} before saving.
        </div>
      )}
      {flag.error && base && (
        <ErrorBanner error={flag.error} action="view this flag" />
      )}
      <ErrorBanner error={save.error} action="change flags in this environment" />
      <ErrorBanner error={archive.error} action="archive flags in this environment" />
      <ErrorBanner error={remove.error} action="delete flags in this environment" />

      {!isNew && base && <LastSevenDays envId={envId} flagKey={base.key} />}
      {!isNew && base && <ReleasePanel flag={base} env={env} projectId={projectId} />}

      <div className="editor-grid">
        <Section title="Basics">
          {isNew && (
            <Field label="Key" hint="Letters, digits, _ and -; cannot change later." error={errorAt(errors, "key")}>
              {(p) => (
                <input
                  {...p}
                  type="text"
                  value={form.key}
                  autoComplete="off"
                  spellCheck={false}
                  onChange={(e) => set("key", e.target.value)}
                />
              )}
            </Field>
          )}
          <Field label="Description" error={errorAt(errors, "description")}>
            {(p) => <textarea {...p} rows={2} value={form.description} onChange={(e) => set("description", e.target.value)} />}
          </Field>
          <div className="grid-2">
            <Field
              label="Type"
              hint={!isNew ? "Changing the type needs values of the new type." : undefined}
              error={errorAt(errors, "flag_type")}
            >
              {(p) => (
                <select
                  {...p}
                  value={t}
                  onChange={(e) => {
                    const next = e.target.value as FlagType;
                    update((f) => ({
                      ...f,
                      flag_type: next,
                      default_value: next === "boolean" || f.flag_type === "boolean" ? "" : f.default_value,
                      disabled_value: next === "boolean" || f.flag_type === "boolean" ? "" : f.disabled_value,
                    }));
                  }}
                >
                  {FLAG_TYPES.map((ft) => (
                    <option key={ft} value={ft}>
                      {ft}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Owner" hint="Email of the person responsible." error={errorAt(errors, "owner_email")}>
              {(p) => (
                <input {...p} type="email" value={form.owner_email} onChange={(e) => set("owner_email", e.target.value)} />
              )}
            </Field>
          </div>
          <div className="row enabled-row">
            <Toggle checked={form.is_enabled} label="Enabled" onChange={(v) => set("is_enabled", v)} />
            <span>{form.is_enabled ? "Enabled: rules and rollout apply" : "Disabled: everyone gets the off value"}</span>
          </div>
          <div className="row enabled-row toggle-line">
            <Toggle
              checked={form.client_side}
              label="Client-side"
              describedBy={clientSideHint}
              onChange={(v) => set("client_side", v)}
            />
            <span id={clientSideHint}>
              {form.client_side
                ? "Client-side: browsers and apps with a client key (pk_live_…) can evaluate it."
                : "Server only: client keys (browsers, mobile apps) cannot see it."}
            </span>
          </div>
          {errorAt(errors, "client_side") && <div className="field-error">{errorAt(errors, "client_side")}</div>}
          <TagEditor
            tags={form.tags}
            draft={tagDraft}
            setDraft={setTagDraft}
            error={errorAt(errors, "tags", true)}
            onChange={(tags) => set("tags", tags)}
          />
        </Section>

        <Section title="Values">
          {t === "boolean" ? (
            <p className="muted">Boolean flags serve true when on (and inside the rollout) and false otherwise.</p>
          ) : (
            <div className="grid-2">
              <Field
                label="Default value"
                hint="Served when on, inside the rollout, no rule matched and no variants."
                error={errorAt(errors, "default_value")}
              >
                {(p) => <ValueInput {...p} type={t} value={form.default_value} onChange={(v) => set("default_value", v)} />}
              </Field>
              <Field
                label="Off value"
                hint="Served when disabled, outside the rollout or a prerequisite fails (blank: null)."
                error={errorAt(errors, "disabled_value")}
              >
                {(p) => <ValueInput {...p} type={t} value={form.disabled_value} onChange={(v) => set("disabled_value", v)} />}
              </Field>
            </div>
          )}
          <RolloutInput value={form.rollout} onChange={(v) => set("rollout", v)} error={errorAt(errors, "rollout_percentage")} />
        </Section>
      </div>

      {t !== "boolean" && (
        <Section
          title="Variants"
          actions={
            <Button className="btn-small" onClick={() => update((f) => ({ ...f, variants: [...f.variants, emptyVariant()] }))}>
              Add variant
            </Button>
          }
        >
          <p className="muted">
            Users inside the rollout that match no rule get one variant, chosen by weight (weights are relative).
          </p>
          {form.variants.length > 0 && (
            <div className="table-wrap">
              <table className="variants-table">
                <thead>
                  <tr>
                    <th scope="col">Value</th>
                    <th scope="col">Weight</th>
                    <th scope="col">Share</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {form.variants.map((v, i) => {
                    const valueErr = errorAt(errors, `variants.${i}.value`);
                    const weightErr = errorAt(errors, `variants.${i}.weight`);
                    const setV = (patch: Partial<typeof v>) =>
                      update((f) => ({ ...f, variants: f.variants.map((x, j) => (j === i ? { ...x, ...patch } : x)) }));
                    return (
                      <tr key={v.id}>
                        <td>
                          <ValueInput
                            type={t}
                            aria-label={`Variant ${i + 1} value`}
                            aria-invalid={valueErr ? true : undefined}
                            value={v.value}
                            onChange={(value) => setV({ value })}
                          />
                          {valueErr && <div className="field-error">{valueErr}</div>}
                        </td>
                        <td>
                          <input
                            type="number"
                            min={0}
                            step={1}
                            className="weight-input"
                            aria-label={`Variant ${i + 1} weight`}
                            aria-invalid={weightErr ? true : undefined}
                            value={v.weight}
                            onChange={(e) => setV({ weight: e.target.value })}
                          />
                          {weightErr && <div className="field-error">{weightErr}</div>}
                        </td>
                        <td className="num">{weights.shares[i] ?? 0}%</td>
                        <td>
                          <Button
                            variant="ghost"
                            className="btn-small"
                            aria-label={`Remove variant ${i + 1}`}
                            onClick={() => update((f) => ({ ...f, variants: f.variants.filter((_, j) => j !== i) }))}
                          >
                            Remove
                          </Button>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          <p className={weights.valid ? "weights-ok" : "weights-bad"} role="status" data-testid="weight-sum">
            {weights.message}
          </p>
          {errors.variants && <div className="field-error">{errors.variants}</div>}
        </Section>
      )}

      <Section
        title="Targeting rules"
        actions={
          <>
            <Button className="btn-small" onClick={() => update((f) => ({ ...f, rules: [...f.rules, emptyRule()] }))}>
              Add rule
            </Button>
            <Button className="btn-small" onClick={() => update((f) => ({ ...f, rules: [...f.rules, emptySegmentRule()] }))}>
              Add segment rule
            </Button>
          </>
        }
      >
        <p className="muted">
          Evaluated in order; the first match wins and bypasses the flag&apos;s rollout. A rule matches when all of its conditions
          hold (and, for a segment rule, the user is in the segment); a rule rollout lets only that share of them in. Drag a rule or
          use Move up / Move down to reorder.
        </p>
        {form.rules.length === 0 && <p className="muted">No rules: everyone goes through the rollout.</p>}
        <ol className="rules">
          {form.rules.map((r, i) => (
            <li
              key={r.id}
              className={`rule card${dragFrom === i ? " dragging" : ""}`}
              onDragOver={(e) => e.preventDefault()}
              onDrop={(e) => {
                e.preventDefault();
                if (dragFrom !== null) moveRule(dragFrom, i);
                setDragFrom(null);
              }}
            >
              <RuleEditor
                index={i}
                count={form.rules.length}
                rule={r}
                type={t}
                flagVariants={form.variants}
                errors={errors}
                segments={segments.data ?? []}
                onChange={(patch) => setRule(i, patch)}
                onMove={(to) => moveRule(i, to)}
                onDragStart={(e) => {
                  setDragFrom(i);
                  if (e.dataTransfer) {
                    e.dataTransfer.effectAllowed = "move";
                    e.dataTransfer.setData("text/plain", String(i));
                  }
                }}
                onDragEnd={() => setDragFrom(null)}
                onRemove={() => {
                  update((f) => ({ ...f, rules: f.rules.filter((_, j) => j !== i) }));
                  setErrors({});
                }}
              />
            </li>
          ))}
        </ol>
        {segments.error && <ErrorBanner error={segments.error} action="list segments" />}
      </Section>

      <Section
        title="Prerequisites"
        actions={
          <Button
            className="btn-small"
            onClick={() => update((f) => ({ ...f, prerequisites: [...f.prerequisites, emptyPrereq()] }))}
          >
            Add prerequisite
          </Button>
        }
      >
        <p className="muted">Checked first: if any is not met, everyone gets the off value.</p>
        {form.prerequisites.map((p, i) => {
          const setP = (patch: Partial<typeof p>) =>
            update((f) => ({ ...f, prerequisites: f.prerequisites.map((x, j) => (j === i ? { ...x, ...patch } : x)) }));
          const known = otherFlags.some((f) => f.key === p.flag_key);
          return (
            <div className="row prereq" key={p.id}>
              <Field label={`Prerequisite ${i + 1} flag`} error={errorAt(errors, `prerequisites.${i}.flag_key`)}>
                {(a) => (
                  <select {...a} value={p.flag_key} onChange={(e) => setP({ flag_key: e.target.value })}>
                    <option value="">Choose a flag…</option>
                    {!known && p.flag_key && <option value={p.flag_key}>{p.flag_key} (not found)</option>}
                    {otherFlags.map((f) => (
                      <option key={f.key} value={f.key}>
                        {f.key} ({f.flag_type})
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field
                label={`Prerequisite ${i + 1} required value`}
                hint="Blank: the flag only has to be on (not serving its off value)."
                error={errorAt(errors, `prerequisites.${i}.required_value`)}
              >
                {(a) => (
                  <input {...a} type="text" value={p.required_value} onChange={(e) => setP({ required_value: e.target.value })} />
                )}
              </Field>
              <Button
                variant="ghost"
                className="btn-small"
                aria-label={`Remove prerequisite ${i + 1}`}
                onClick={() => update((f) => ({ ...f, prerequisites: f.prerequisites.filter((_, j) => j !== i) }))}
              >
                Remove
              </Button>
            </div>
          );
        })}
      </Section>

      {/* Pinned to the window's bottom only with unsaved edits (flags.css). */}
      <div className={dirty ? "editor-footer editor-footer-pinned" : "editor-footer"}>
        <Button type="submit" variant="primary" busy={save.isPending} disabled={!envId}>
          {isNew ? "Create flag" : "Save flag"}
        </Button>
        {dirty && <span className="muted">Unsaved changes</span>}
      </div>

      {confirmDelete && base && (
        <ConfirmDialog
          title={`Delete ${base.key}?`}
          confirmLabel="Delete flag"
          busy={remove.isPending}
          onConfirm={() => remove.mutate()}
          onClose={() => setConfirmDelete(false)}
        >
          <p>
            This deletes <code>{base.key}</code> from {env?.name ?? "this environment"} only. SDKs will evaluate it as missing
            (false / off value). Archiving keeps it and is reversible.
          </p>
        </ConfirmDialog>
      )}
    </form>
  );
}

function RolloutInput({ value, onChange, error }: { value: number | null; onChange: (v: number) => void; error?: string }) {
  const id = useId();
  const pct = value ?? 100;
  return (
    <div className={`field${error ? " field-invalid" : ""}`}>
      <label htmlFor={id}>Rollout percentage</label>
      <div className="row rollout-row">
        <input
          id={id}
          type="range"
          min={0}
          max={100}
          step={1}
          value={pct}
          aria-valuetext={`${pct} percent`}
          onChange={(e) => onChange(Number(e.target.value))}
        />
        <output htmlFor={id} className="rollout-out">
          {pct}%
        </output>
      </div>
      <div className="field-hint">
        {value === null ? "No limit set: everyone is inside." : `${pct}% of users (sticky per user) are inside; the rest get the off value.`}
      </div>
      {error && <div className="field-error">{error}</div>}
    </div>
  );
}

function TagEditor({
  tags,
  draft,
  setDraft,
  onChange,
  error,
}: {
  tags: string[];
  draft: string;
  setDraft: (v: string) => void;
  onChange: (tags: string[]) => void;
  error?: string;
}) {
  const id = useId();
  const add = () => {
    const t = draft.trim();
    if (t && !tags.includes(t)) onChange([...tags, t]);
    setDraft("");
  };
  return (
    <div className={`field${error ? " field-invalid" : ""}`}>
      <label htmlFor={id}>Tags</label>
      <div className="row">
        {tags.map((t) => (
          <span className="tag tag-removable" key={t}>
            {t}
            <button type="button" className="tag-x" aria-label={`Remove tag ${t}`} onClick={() => onChange(tags.filter((x) => x !== t))}>
              ×
            </button>
          </span>
        ))}
        <input
          id={id}
          type="text"
          className="tag-input"
          value={draft}
          maxLength={100}
          placeholder="Add a tag"
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              add();
            }
          }}
        />
        <Button className="btn-small" onClick={add} disabled={!draft.trim()}>
          Add tag
        </Button>
      </div>
      {error && <div className="field-error">{error}</div>}
    </div>
  );
}

function RuleEditor({
  index,
  count,
  rule,
  type,
  flagVariants,
  errors,
  segments,
  onChange,
  onMove,
  onRemove,
  onDragStart,
  onDragEnd,
}: {
  index: number;
  count: number;
  rule: RuleForm;
  type: FlagType;
  flagVariants: VariantForm[];
  errors: FieldErrors;
  segments: { key: string; name: string }[];
  onChange: (patch: Partial<RuleForm>) => void;
  onMove: (to: number) => void;
  onRemove: () => void;
  onDragStart: (e: DragEvent<HTMLSpanElement>) => void;
  onDragEnd: () => void;
}) {
  const n = index + 1;
  const path = `rules.${index}`;
  const known = segments.some((s) => s.key === rule.segment_key);
  const ruleErr = [errors[path], errors[`${path}.conditions`], leftoverErrors(errors, path, rule)].filter(Boolean).join("; ");
  const sr = <span className="sr-only">Rule {n} </span>;
  return (
    <div className="rule-body">
      <div className="rule-head">
        <span className="drag-handle" aria-hidden="true" title="Drag to reorder" draggable onDragStart={onDragStart} onDragEnd={onDragEnd}>
          ⋮⋮
        </span>
        <strong>
          Rule {n}
          {rule.kind === "segment" ? " (segment)" : ""}
        </strong>
        <div className="row rule-actions">
          {/* Visible text inside the accessible name (WCAG 2.5.3): "Move [rule 2] up". */}
          <Button className="btn-small" disabled={index === 0} onClick={() => onMove(index - 1)}>
            Move <span className="sr-only">rule {n} </span>up
          </Button>
          <Button className="btn-small" disabled={index === count - 1} onClick={() => onMove(index + 1)}>
            Move <span className="sr-only">rule {n} </span>down
          </Button>
          <Button variant="ghost" className="btn-small" onClick={onRemove}>
            Remove<span className="sr-only"> rule {n}</span>
          </Button>
        </div>
      </div>
      {ruleErr && (
        <div className="field-error" role="alert">
          {ruleErr}
        </div>
      )}
      {rule.kind === "segment" && (
        <div className="rule-segment">
          <Field label={<>{sr}Segment</>} error={errorAt(errors, `${path}.segment_key`)}>
            {(p) => (
              <select {...p} value={rule.segment_key} onChange={(e) => onChange({ segment_key: e.target.value })}>
                <option value="">Choose a segment…</option>
                {!known && rule.segment_key && <option value={rule.segment_key}>{rule.segment_key} (not found)</option>}
                {segments.map((s) => (
                  <option key={s.key} value={s.key}>
                    {s.name} ({s.key})
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
      )}
      <ConditionRows
        rule={rule}
        field={path}
        errors={errors}
        label={`Rule ${n}`}
        topLevelWhenEmpty={rule.kind === "condition"}
        onChange={onChange}
        empty={
          rule.kind === "segment" ? (
            <p className="muted">Everyone in the segment. Add conditions to narrow it: users must satisfy all of them too.</p>
          ) : (
            <p className="muted">No condition: add one (a rule needs a condition or a segment).</p>
          )
        }
      />
      <div className="rule-outcome">
        <Field
          label={<>{sr}Rollout %</>}
          hint="Blank: everyone who matches. Otherwise that share of them (sticky per user); the others go on to the next rule."
          error={errorAt(errors, `${path}.rollout_percentage`)}
        >
          {(p) => (
            <input
              {...p}
              type="number"
              min={0}
              max={100}
              step={1}
              className="weight-input"
              placeholder="100"
              value={rule.rollout}
              onChange={(e) => onChange({ rollout: e.target.value })}
            />
          )}
        </Field>
        {type === "boolean" ? (
          <p className="muted rule-serve">Serves true</p>
        ) : (
          <RuleServe rule={rule} n={n} path={path} type={type} flagVariants={flagVariants} errors={errors} onChange={onChange} />
        )}
      </div>
    </div>
  );
}

// leftoverErrors joins the messages under a rule that no field of the rule
// editor shows (a path the server may name that the form has no input for),
// so that no 422 detail is lost.
function leftoverErrors(errors: FieldErrors, path: string, rule: RuleForm): string {
  const shown = new Set<string>([path, `${path}.conditions`, `${path}.segment_key`, `${path}.rollout_percentage`, `${path}.variant`, `${path}.variants`]);
  rule.conditions.forEach((c, j) => {
    const p = rowPath(rule, path, j);
    shown.add(`${p}.attribute`).add(`${p}.operator`).add(`${p}.values`);
    c.values.forEach((_, k) => shown.add(`${p}.values.${k}`));
  });
  rule.split.forEach((_, k) => shown.add(`${path}.variants.${k}.value`).add(`${path}.variants.${k}.weight`));
  return Object.keys(errors)
    .filter((k) => k.startsWith(path + ".") && !shown.has(k))
    .map((k) => `${k.slice(path.length + 1)}: ${errors[k]}`)
    .join("; ");
}

// RuleServe chooses what a matching user gets: one value, or a weighted
// split (the rule's variants, chosen with the flag's variant bucket so users
// keep their arm).
function RuleServe({
  rule,
  n,
  path,
  type,
  flagVariants,
  errors,
  onChange,
}: {
  rule: RuleForm;
  n: number;
  path: string;
  type: FlagType;
  flagVariants: VariantForm[];
  errors: FieldErrors;
  onChange: (patch: Partial<RuleForm>) => void;
}) {
  const name = useId();
  const weights = weightSummary(rule.split);
  const setSplit = (split: VariantForm[]) => onChange({ split });
  return (
    <div className="rule-serve-block">
      <fieldset className="serve-choice">
        <legend>
          <span className="sr-only">Rule {n}: </span>Matching users get
        </legend>
        <label>
          <input type="radio" name={name} checked={rule.serve === "value"} onChange={() => onChange({ serve: "value" })} /> one value
        </label>
        <label>
          <input
            type="radio"
            name={name}
            checked={rule.serve === "split"}
            onChange={() =>
              onChange({
                serve: "split",
                // Start from the flag's own variants, the usual experiment inside a segment.
                split: rule.split.length > 0 ? rule.split : flagVariants.map((v) => ({ ...v, id: newId("variant") })),
              })
            }
          />{" "}
          a split
        </label>
      </fieldset>
      {rule.serve === "value" ? (
        <Field label={<><span className="sr-only">Rule {n} </span>Serves</>} hint="Blank: the default value." error={errorAt(errors, `${path}.variant`)}>
          {(p) => <ValueInput {...p} type={type} value={rule.variant} onChange={(v) => onChange({ variant: v })} />}
        </Field>
      ) : (
        <div className="rule-split">
          {rule.split.length > 0 && (
            <table className="variants-table">
              <thead>
                <tr>
                  <th scope="col">Value</th>
                  <th scope="col">Weight</th>
                  <th scope="col">Share</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rule.split.map((v, k) => {
                  const valueErr = errorAt(errors, `${path}.variants.${k}.value`);
                  const weightErr = errorAt(errors, `${path}.variants.${k}.weight`);
                  const setV = (patch: Partial<VariantForm>) => setSplit(rule.split.map((x, j) => (j === k ? { ...x, ...patch } : x)));
                  return (
                    <tr key={v.id}>
                      <td>
                        <ValueInput
                          type={type}
                          aria-label={`Rule ${n} variant ${k + 1} value`}
                          aria-invalid={valueErr ? true : undefined}
                          value={v.value}
                          onChange={(value) => setV({ value })}
                        />
                        {valueErr && <div className="field-error">{valueErr}</div>}
                      </td>
                      <td>
                        <input
                          type="number"
                          min={0}
                          step={1}
                          className="weight-input"
                          aria-label={`Rule ${n} variant ${k + 1} weight`}
                          aria-invalid={weightErr ? true : undefined}
                          value={v.weight}
                          onChange={(e) => setV({ weight: e.target.value })}
                        />
                        {weightErr && <div className="field-error">{weightErr}</div>}
                      </td>
                      <td className="num">{weights.shares[k] ?? 0}%</td>
                      <td>
                        <Button variant="ghost" className="btn-small" onClick={() => setSplit(rule.split.filter((_, j) => j !== k))}>
                          Remove<span className="sr-only"> rule {n} variant {k + 1}</span>
                        </Button>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
          <Button className="btn-small" onClick={() => setSplit([...rule.split, emptyVariant()])}>
            Add variant<span className="sr-only"> to rule {n}</span>
          </Button>
          <p className={weights.valid ? "weights-ok" : "weights-bad"} role="status">
            {rule.split.length === 0 ? "No variants yet." : weights.message}
          </p>
          {errors[`${path}.variants`] && (
            <div className="field-error" role="alert">
              {errors[`${path}.variants`]}
            </div>
          )}
        </div>
      )}
    </div>
  );
}
