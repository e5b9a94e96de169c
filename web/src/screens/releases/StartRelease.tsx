// Start a guarded release of one boolean flag (docs/releases.md): stages from
// a preset or written by hand, guardrail metrics chosen from the
// environment's goal events, and the advanced settings folded away. Problems
// found here and the server's 422 details are shown next to their fields.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent, type ReactNode } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ErrorBanner, Loading, Notice, PageHeader } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { flagKeys, releasesKey } from "../../lib/stream";
import { apiFieldErrors, errorAt } from "../flags/flagform";
import { useEventKeys } from "../measurement/common";
import { formatCount } from "../measurement/format";
import { releasePath, useFlagReleases } from "./common";
import {
  MAX_METRICS,
  MAX_STAGES,
  PRESETS,
  UNITS,
  blocker,
  emptyForm,
  emptyMetric,
  formToRequest,
  formatDuration,
  isActive,
  nextStage,
  presetStages,
  stageSeconds,
  type FieldErrors,
  type MetricForm,
  type PresetName,
  type ReleaseForm,
  type StageForm,
  type Unit,
} from "./releaseform";
import "./releases.css";

const OTHER = "__other";
const ADVANCED = ["alpha", "min_users", "check_interval_seconds"];

// CellError is a row input's message, tied to it by id.
function CellError({ id, error }: { id: string; error?: string }) {
  if (!error) return null;
  return (
    <div className="field-error" id={id} role="alert">
      {error}
    </div>
  );
}

export default function StartRelease() {
  const api = useApi();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const { key = "" } = useParams();
  const { projectId, envId, env } = useScope();
  const flag = useQuery({
    queryKey: flagKeys.one(envId, key),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flags/{key}", { params: { path: { env_id: envId, key } } })),
    enabled: !!envId && !!key,
  });
  const releases = useFlagReleases(envId, key);
  const eventKeys = useEventKeys(envId);
  const [form, setForm] = useState<ReleaseForm>(emptyForm);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [advancedOpen, setAdvancedOpen] = useState(false);
  const ids = useId();
  const flagPath = envPath(projectId, envId, `flags/${encodeURIComponent(key)}`);

  const start = useMutation({
    mutationFn: (body: ReturnType<typeof formToRequest>["body"]) =>
      unwrap(
        api.POST("/api/environments/{env_id}/flags/{key}/releases", { params: { path: { env_id: envId, key } }, body }),
      ),
    onSuccess: (release) => {
      void queryClient.invalidateQueries({ queryKey: releasesKey(envId) });
      void queryClient.invalidateQueries({ queryKey: flagKeys.one(envId, key) });
      void queryClient.invalidateQueries({ queryKey: flagKeys.list(envId), exact: true });
      navigate(releasePath(projectId, envId, release.id));
    },
    onError: (err) => {
      const fields = apiFieldErrors(err);
      setErrors(fields);
      if (ADVANCED.some((f) => fields[f])) setAdvancedOpen(true);
    },
  });

  if (flag.isPending || releases.isPending) return <Loading label="Loading flag…" />;
  if (flag.error) {
    return (
      <div className="releases">
        <PageHeader title="Start a guarded release" />
        <ErrorBanner error={flag.error} action="view this flag" />
        <Link to={envPath(projectId, envId, "flags")}>Back to flags</Link>
      </div>
    );
  }
  const active = (releases.data ?? []).find((r) => isActive(r.status));
  const why = blocker(flag.data, env, active);
  const knownKeys = (eventKeys.data ?? []).map((k) => k.event_key);

  const setStages = (fn: (s: StageForm[]) => StageForm[]) => setForm((f) => ({ ...f, preset: "custom", stages: fn(f.stages) }));
  const setStage = (i: number, patch: Partial<StageForm>) =>
    setStages((s) => s.map((st, j) => (j === i ? { ...st, ...patch } : st)));
  const setMetric = (i: number, patch: Partial<MetricForm>) =>
    setForm((f) => ({ ...f, metrics: f.metrics.map((m, j) => (j === i ? { ...m, ...patch } : m)) }));
  const choosePreset = (p: PresetName) =>
    setForm((f) => ({ ...f, preset: p, stages: p === "custom" ? f.stages : presetStages(p) }));

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const { body, errors: local } = formToRequest(form);
    setErrors(local);
    if (ADVANCED.some((f) => local[f])) setAdvancedOpen(true);
    if (Object.keys(local).length > 0) return;
    start.mutate(body);
  };

  const total = form.stages.reduce((n, s) => n + (stageSeconds(s) || 0), 0);
  const errorCount = Object.keys(errors).length;
  const f = flag.data;
  const current = f.rollout_percentage === null ? "everyone (no rollout percentage)" : `${f.rollout_percentage} %`;

  return (
    <div className="releases">
      <PageHeader title={<>Start a guarded release of <code>{key}</code></>}>
        <Link to={flagPath}>← {key}</Link>
        {env && <> · {env.name}</>}
      </PageHeader>
      {why ? (
        <Notice kind="info">
          {why.text}{" "}
          {active ? <Link to={releasePath(projectId, envId, active.id)}>Open the release</Link> : <Link to={flagPath}>Back to the flag</Link>}
        </Notice>
      ) : (
        <form className="release-form stack" onSubmit={onSubmit} noValidate>
          <p>
            The flag serves <code>true</code> to {current} now. Starting the release sets its rollout to the first stage’s
            percentage at once; each stage runs its time, then the next begins. After the last one the release completes and
            the flag stays there.
          </p>
          {!f.is_enabled && (
            <Notice kind="warning">
              The flag is disabled: everyone gets <code>false</code> whatever the stage. Enable it for the release to have an
              effect.
            </Notice>
          )}

          <fieldset className="card">
            <legend>Stages</legend>
            <div className="row preset-row" role="radiogroup" aria-label="Stage preset">
              {[...PRESETS, { value: "custom" as const, label: "Custom" }].map((p) => (
                <label key={p.value} className="check">
                  <input
                    type="radio"
                    name={`${ids}-preset`}
                    value={p.value}
                    checked={form.preset === p.value}
                    onChange={() => choosePreset(p.value)}
                  />
                  {p.label}
                </label>
              ))}
            </div>
            <div className="table-wrap">
              <table className="stage-table">
                <thead>
                  <tr>
                    <th scope="col">Stage</th>
                    <th scope="col">Rollout %</th>
                    <th scope="col">Duration</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {form.stages.map((s, i) => {
                    const pctErr = errorAt(errors, `stages.${i}.percentage`);
                    const durErr = errorAt(errors, `stages.${i}.duration_seconds`);
                    return (
                      <tr key={i}>
                        <th scope="row">{i + 1}</th>
                        <td>
                          <input
                            className="pct-input"
                            inputMode="numeric"
                            aria-label={`Stage ${i + 1} rollout %`}
                            value={s.percentage}
                            aria-invalid={pctErr ? true : undefined}
                            aria-describedby={pctErr ? `${ids}-s${i}-p` : undefined}
                            onChange={(e) => setStage(i, { percentage: e.target.value })}
                          />
                          <CellError id={`${ids}-s${i}-p`} error={pctErr} />
                        </td>
                        <td>
                          <div className="row duration">
                            <input
                              className="amount-input"
                              inputMode="numeric"
                              aria-label={`Stage ${i + 1} duration`}
                              value={s.amount}
                              aria-invalid={durErr ? true : undefined}
                              aria-describedby={durErr ? `${ids}-s${i}-d` : undefined}
                              onChange={(e) => setStage(i, { amount: e.target.value })}
                            />
                            <select
                              aria-label={`Stage ${i + 1} duration unit`}
                              value={s.unit}
                              onChange={(e) => setStage(i, { unit: e.target.value as Unit })}
                            >
                              {UNITS.map((u) => (
                                <option key={u.value} value={u.value}>
                                  {u.label}
                                </option>
                              ))}
                            </select>
                          </div>
                          <CellError id={`${ids}-s${i}-d`} error={durErr} />
                        </td>
                        <td>
                          <Button
                            className="btn-small"
                            aria-label={`Remove stage ${i + 1}`}
                            disabled={form.stages.length <= 1}
                            onClick={() => setStages((st) => st.filter((_, j) => j !== i))}
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
            {errors.stages && <div className="field-error" role="alert">{errors.stages}</div>}
            <div className="row">
              <Button
                className="btn-small"
                disabled={form.stages.length >= MAX_STAGES}
                onClick={() => setStages((st) => [...st, nextStage(st)])}
              >
                Add stage
              </Button>
              <span className="muted" aria-live="polite">
                {form.stages.map((s) => `${s.percentage || "?"} %`).join(" → ")} · {formatDuration(total)} in all
              </span>
            </div>
          </fieldset>

          <fieldset className="card">
            <legend>Guardrail metrics</legend>
            <p className="muted">
              What must not get worse, from the goal events your application tracks with the same user key as the
              evaluation. Tolerance is the relative change you accept the bad way before the release rolls back (0: any
              proven regression).
            </p>
            {eventKeys.isSuccess && knownKeys.length === 0 && (
              <p className="muted">No goal event was reported in this environment yet: type the key your application will track.</p>
            )}
            <ErrorBanner error={eventKeys.error} action="read the goal events of this environment" />
            <ol className="metric-rows">
              {form.metrics.map((m, i) => (
                <MetricRow
                  key={i}
                  index={i}
                  metric={m}
                  knownKeys={knownKeys}
                  usersOf={(k) => eventKeys.data?.find((x) => x.event_key === k)?.unique_users}
                  errors={errors}
                  canRemove={form.metrics.length > 1}
                  onChange={(patch) => setMetric(i, patch)}
                  onRemove={() => setForm((fm) => ({ ...fm, metrics: fm.metrics.filter((_, j) => j !== i) }))}
                />
              ))}
            </ol>
            {errors.metrics && <div className="field-error" role="alert">{errors.metrics}</div>}
            <Button
              className="btn-small"
              disabled={form.metrics.length >= MAX_METRICS}
              onClick={() =>
                setForm((fm) => ({
                  ...fm,
                  metrics: [...fm.metrics, emptyMetric(knownKeys.find((k) => !fm.metrics.some((x) => x.event_key === k)) ?? "")],
                }))
              }
            >
              Add metric
            </Button>
          </fieldset>

          <details className="card advanced" open={advancedOpen} onToggle={(e) => setAdvancedOpen(e.currentTarget.open)}>
            <summary>Advanced settings</summary>
            <div className="grid-3">
              <Adv label="Alpha" hint="False-alarm rate across all checks; blank: 0.05." error={errors.alpha}>
                {(p) => <input {...p} inputMode="decimal" value={form.alpha} onChange={(e) => setForm((fm) => ({ ...fm, alpha: e.target.value }))} />}
              </Adv>
              <Adv label="Minimum users per arm" hint="No decision before both arms have this many; blank: 100." error={errors.min_users}>
                {(p) => (
                  <input {...p} inputMode="numeric" value={form.min_users} onChange={(e) => setForm((fm) => ({ ...fm, min_users: e.target.value }))} />
                )}
              </Adv>
              <Adv label="Check interval (seconds)" hint="How often it looks; blank: 60." error={errors.check_interval_seconds}>
                {(p) => (
                  <input
                    {...p}
                    inputMode="numeric"
                    value={form.check_interval_seconds}
                    onChange={(e) => setForm((fm) => ({ ...fm, check_interval_seconds: e.target.value }))}
                  />
                )}
              </Adv>
            </div>
          </details>

          {errorCount > 0 && !start.error && (
            <div className="banner banner-error" role="alert">
              Fix the {errorCount} highlighted field{errorCount > 1 ? "s" : ""} before starting.
            </div>
          )}
          <ErrorBanner
            error={start.error}
            action="start releases in this environment"
            shownFields={["stages", "metrics", ...ADVANCED]}
          />
          <div className="row">
            <Button type="submit" variant="primary" busy={start.isPending}>
              Start release
            </Button>
            <Link to={flagPath}>Cancel</Link>
            <span className="muted">
              The flag’s rollout becomes {form.stages[0]?.percentage || "?"} % at once.
            </span>
          </div>
        </form>
      )}
    </div>
  );
}

// Adv is one advanced setting: a labelled input with its hint and error.
function Adv({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint: string;
  error?: string;
  children: (p: { id: string; "aria-describedby": string; "aria-invalid"?: boolean }) => ReactNode;
}) {
  const id = useId();
  return (
    <div className={`field${error ? " field-invalid" : ""}`}>
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-describedby": `${id}-h${error ? ` ${id}-e` : ""}`, "aria-invalid": error ? true : undefined })}
      <div className="field-hint" id={`${id}-h`}>
        {hint}
      </div>
      <CellError id={`${id}-e`} error={error} />
    </div>
  );
}

function MetricRow({
  index: i,
  metric: m,
  knownKeys,
  usersOf,
  errors,
  canRemove,
  onChange,
  onRemove,
}: {
  index: number;
  metric: MetricForm;
  knownKeys: string[];
  usersOf: (key: string) => number | undefined;
  errors: FieldErrors;
  canRemove: boolean;
  onChange: (patch: Partial<MetricForm>) => void;
  onRemove: () => void;
}) {
  const id = useId();
  const n = i + 1;
  const keyErr = errorAt(errors, `metrics.${i}.event_key`);
  const tolErr = errorAt(errors, `metrics.${i}.tolerance`);
  const kindErr = errorAt(errors, `metrics.${i}.kind`);
  const dirErr = errorAt(errors, `metrics.${i}.bad_direction`);
  const typed = knownKeys.length === 0 || m.other || (m.event_key !== "" && !knownKeys.includes(m.event_key));
  const keyInput = {
    "aria-invalid": keyErr ? true : undefined,
    "aria-describedby": keyErr ? `${id}-k` : undefined,
  };
  return (
    <li className="metric-row">
      <div className="field">
        <label htmlFor={`${id}-key`}>Metric {n} event</label>
        {knownKeys.length > 0 && (
          <select
            id={`${id}-key`}
            {...(typed ? {} : keyInput)}
            value={typed ? OTHER : m.event_key}
            onChange={(e) =>
              e.target.value === OTHER ? onChange({ other: true, event_key: "" }) : onChange({ other: false, event_key: e.target.value })
            }
          >
            <option value="">Choose an event…</option>
            {knownKeys.map((k) => (
              <option key={k} value={k}>
                {k}
                {usersOf(k) !== undefined ? ` (${formatCount(usersOf(k))} user${usersOf(k) === 1 ? "" : "s"})` : ""}
              </option>
            ))}
            <option value={OTHER}>Another key…</option>
          </select>
        )}
        {typed && (
          <input
            id={knownKeys.length > 0 ? undefined : `${id}-key`}
            aria-label={knownKeys.length > 0 ? `Metric ${n} event key` : undefined}
            {...keyInput}
            value={m.event_key}
            autoComplete="off"
            spellCheck={false}
            placeholder="purchase"
            onChange={(e) => onChange({ event_key: e.target.value })}
          />
        )}
        <CellError id={`${id}-k`} error={keyErr} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-kind`}>Metric {n} kind</label>
        <select
          id={`${id}-kind`}
          value={m.kind}
          aria-invalid={kindErr ? true : undefined}
          onChange={(e) => onChange({ kind: e.target.value as MetricForm["kind"] })}
        >
          <option value="conversion">Conversion (did the user do it)</option>
          <option value="mean">Mean (sum of values per user)</option>
        </select>
        <CellError id={`${id}-kind-e`} error={kindErr} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-dir`}>Metric {n} bad direction</label>
        <select
          id={`${id}-dir`}
          value={m.bad_direction}
          aria-invalid={dirErr ? true : undefined}
          onChange={(e) => onChange({ bad_direction: e.target.value as MetricForm["bad_direction"] })}
        >
          <option value="decrease">A drop is bad</option>
          <option value="increase">A rise is bad</option>
        </select>
        <CellError id={`${id}-dir-e`} error={dirErr} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-tol`}>Metric {n} tolerance %</label>
        <input
          id={`${id}-tol`}
          className="pct-input"
          inputMode="decimal"
          value={m.tolerance}
          aria-invalid={tolErr ? true : undefined}
          aria-describedby={tolErr ? `${id}-t` : undefined}
          onChange={(e) => onChange({ tolerance: e.target.value })}
        />
        <CellError id={`${id}-t`} error={tolErr} />
      </div>
      <Button className="btn-small metric-remove" aria-label={`Remove metric ${n}`} disabled={!canRemove} onClick={onRemove}>
        Remove
      </Button>
    </li>
  );
}
