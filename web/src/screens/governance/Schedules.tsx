// Scheduled changes: flag merge patches the server applies at a set time.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { Link } from "react-router";
import { ApiError, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ConfirmDialog, Empty, ErrorBanner, Field, Loading, Notice, PageHeader, Time } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { flagKeys } from "../../lib/stream";
import { formatDateTime, localZoneLabel, patchSummary, toLocalInput, toRfc3339Local } from "./shared";
import "./governance.css";

type Scheduled = Schemas["ScheduledChange"];
type FlagPatch = Schemas["FlagPatch"];
type Kind = "enable" | "disable" | "rollout" | "custom";

export const scheduleKeys = { list: (envId: string) => ["scheduled-changes", envId] as const };

// buildPatch turns the form's choice into the merge patch to schedule, or an error message.
export function buildPatch(kind: Kind, rollout: string, custom: string): { patch?: FlagPatch; error?: string } {
  if (kind === "enable") return { patch: { is_enabled: true } };
  if (kind === "disable") return { patch: { is_enabled: false } };
  if (kind === "rollout") {
    const n = Number(rollout);
    if (rollout.trim() === "" || !Number.isInteger(n) || n < 0 || n > 100) {
      return { error: "Enter a whole number from 0 to 100." };
    }
    return { patch: { rollout_percentage: n } };
  }
  try {
    const parsed: unknown = JSON.parse(custom);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return { error: "The patch must be a JSON object." };
    if (Object.keys(parsed).length === 0) return { error: "The patch is empty." };
    return { patch: parsed as FlagPatch };
  } catch {
    return { error: "This is not valid JSON." };
  }
}

function statusOf(s: Scheduled): { label: string; pill: string } {
  if (s.executed_at) return { label: "Applied", pill: "pill-success" };
  if (s.last_error) return { label: "Failing", pill: "pill-danger" };
  if (new Date(s.scheduled_at).getTime() <= Date.now()) return { label: "Due", pill: "pill-warning" };
  return { label: "Scheduled", pill: "" };
}

export default function Schedules() {
  const api = useApi();
  const { projectId, envId, env } = useScope();
  const [show, setShow] = useState<"upcoming" | "applied" | "all">("upcoming");
  const [announce, setAnnounce] = useState("");
  const [deleting, setDeleting] = useState<Scheduled | null>(null);
  const qc = useQueryClient();

  const list = useQuery({
    queryKey: scheduleKeys.list(envId),
    queryFn: () =>
      unwrap(api.GET("/api/environments/{env_id}/scheduled-changes", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });
  const flags = useQuery({
    queryKey: flagKeys.list(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flags", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });
  const remove = useMutation({
    mutationFn: (s: Scheduled) =>
      unwrap(api.DELETE("/api/environments/{env_id}/scheduled-changes/{id}", { params: { path: { env_id: envId, id: s.id } } })),
    onSuccess: (_d, s) => {
      setDeleting(null);
      setAnnounce(`Deleted the scheduled change to ${s.flag_key}.`);
      void qc.invalidateQueries({ queryKey: scheduleKeys.list(envId) });
    },
  });

  const rows = (list.data ?? []).filter((s) => (show === "all" ? true : show === "applied" ? !!s.executed_at : !s.executed_at));

  return (
    <div className="stack gov">
      <PageHeader title="Scheduled changes">
        Flag changes applied automatically at a set time{env ? ` in ${env.name}` : ""}.
      </PageHeader>
      {env?.require_approval ? (
        // The server refuses new schedules here (409); pending ones wait until approval is lifted.
        <Notice kind="warning">
          {env.name} requires approval, so changes cannot be scheduled here: open a change request from the flag instead.
          Changes scheduled before approval was required wait until it is turned off.
        </Notice>
      ) : (
        <CreateSchedule
          envId={envId}
          flags={flags.data ?? []}
          flagsLoading={flags.isPending}
          onCreated={(s) => setAnnounce(`Scheduled “${patchSummary(s.patch)}” for ${s.flag_key} at ${formatDateTime(s.scheduled_at)}.`)}
        />
      )}
      {announce && <Notice kind="success">{announce}</Notice>}
      <section className="gov-section" aria-labelledby="sched-list-title">
        <div className="gov-item-head">
          <h2 id="sched-list-title">Changes</h2>
          <div className="gov-inline-label">
            <label htmlFor="sched-show">Show</label>
            <select id="sched-show" value={show} onChange={(e) => setShow(e.target.value as typeof show)}>
              <option value="upcoming">Not yet applied</option>
              <option value="applied">Applied</option>
              <option value="all">All</option>
            </select>
          </div>
        </div>
        {list.isPending ? (
          <Loading />
        ) : list.isError ? (
          <ErrorBanner error={list.error} action="view scheduled changes" />
        ) : rows.length === 0 ? (
          <Empty title={show === "applied" ? "Nothing applied yet" : "No scheduled changes"} />
        ) : (
          <div className="table-wrap">
            <table className="gov-table">
              <caption className="sr-only">Scheduled changes</caption>
              <thead>
                <tr>
                  <th scope="col">Flag</th>
                  <th scope="col">When</th>
                  <th scope="col">Change</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((s) => {
                  const st = statusOf(s);
                  return (
                    <tr key={s.id}>
                      <th scope="row">
                        <Link to={envPath(projectId, envId, `flags/${encodeURIComponent(s.flag_key)}`)}>
                          <code>{s.flag_key}</code>
                        </Link>
                      </th>
                      <td>
                        {formatDateTime(s.scheduled_at)}
                        <div className="muted">
                          <Time value={s.scheduled_at} />
                        </div>
                      </td>
                      <td className="gov-wrap">
                        <span title={JSON.stringify(s.patch)}>{patchSummary(s.patch)}</span>
                      </td>
                      <td className="gov-wrap">
                        <span className={`pill ${st.pill}`}>{st.label}</span>
                        {s.executed_at && (
                          <div className="muted">
                            at {formatDateTime(s.executed_at)}
                          </div>
                        )}
                        {s.attempts > 0 && !s.executed_at && (
                          <div className="muted">
                            {s.attempts} failed attempt{s.attempts === 1 ? "" : "s"}
                          </div>
                        )}
                        {s.last_error && <div className="field-error">{s.last_error}</div>}
                      </td>
                      <td>
                        <Time value={s.created_at} />
                      </td>
                      <td>
                        {!s.executed_at && (
                          <Button
                            className="btn-small"
                            variant="ghost"
                            aria-label={`Delete scheduled change to ${s.flag_key} at ${formatDateTime(s.scheduled_at)}`}
                            onClick={() => {
                              remove.reset();
                              setDeleting(s);
                            }}
                          >
                            Delete
                          </Button>
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
      {deleting && (
        <ConfirmDialog
          title="Delete this scheduled change?"
          confirmLabel="Delete"
          busy={remove.isPending}
          error={remove.error}
          action="delete scheduled changes"
          onConfirm={() => remove.mutate(deleting)}
          onClose={() => setDeleting(null)}
        >
          “{patchSummary(deleting.patch)}” for <code>{deleting.flag_key}</code> at {formatDateTime(deleting.scheduled_at)}{" "}
          will not be applied.
        </ConfirmDialog>
      )}
    </div>
  );
}

function CreateSchedule({
  envId,
  flags,
  flagsLoading,
  onCreated,
}: {
  envId: string;
  flags: Schemas["Flag"][];
  flagsLoading: boolean;
  onCreated: (s: Scheduled) => void;
}) {
  const api = useApi();
  const qc = useQueryClient();
  const [flagKey, setFlagKey] = useState("");
  const [when, setWhen] = useState(() => toLocalInput(new Date(Date.now() + 3600_000)));
  const [kind, setKind] = useState<Kind>("enable");
  const [rollout, setRollout] = useState("");
  const [custom, setCustom] = useState('{\n  "is_enabled": true\n}');
  const [localErr, setLocalErr] = useState<{ flag?: string; when?: string; patch?: string }>({});
  const zone = useMemo(() => localZoneLabel(), []);
  const active = flags.filter((f) => !f.archived_at);
  const current = flags.find((f) => f.key === flagKey);

  const create = useMutation({
    mutationFn: (v: { key: string; body: Schemas["ScheduledChangeInput"] }) =>
      unwrap(
        api.POST("/api/environments/{env_id}/flags/{key}/scheduled-changes", {
          params: { path: { env_id: envId, key: v.key } },
          body: v.body,
        }),
      ),
    onSuccess: (s) => {
      void qc.invalidateQueries({ queryKey: scheduleKeys.list(envId) });
      onCreated(s);
    },
  });
  const apiErr = create.error instanceof ApiError ? create.error : undefined;

  return (
    <section className="card gov-section" aria-labelledby="sched-new-title">
      <h2 id="sched-new-title">Schedule a change</h2>
      <form
        className="stack"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          const errs: typeof localErr = {};
          if (!flagKey) errs.flag = "Choose a flag.";
          const at = toRfc3339Local(when);
          if (!at) errs.when = "Enter a date and time.";
          else if (new Date(at).getTime() < Date.now() - 30_000) errs.when = "This time is in the past.";
          const built = buildPatch(kind, rollout, custom);
          if (built.error) errs.patch = built.error;
          setLocalErr(errs);
          if (Object.keys(errs).length || !built.patch) return;
          create.mutate({ key: flagKey, body: { scheduled_at: at, patch: built.patch } });
        }}
      >
        <div className="gov-form-grid">
          <Field label="Flag" error={localErr.flag}>
            {(p) => (
              <select {...p} value={flagKey} onChange={(e) => setFlagKey(e.target.value)} disabled={flagsLoading}>
                <option value="">{flagsLoading ? "Loading flags…" : "Choose a flag"}</option>
                {active.map((f) => (
                  <option key={f.key} value={f.key}>
                    {f.key} ({f.is_enabled ? "on" : "off"})
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="When" hint={`Your time zone: ${zone}`} error={localErr.when ?? apiErr?.fieldError("scheduled_at")}>
            {(p) => <input {...p} type="datetime-local" value={when} onChange={(e) => setWhen(e.target.value)} />}
          </Field>
          <Field label="Change">
            {(p) => (
              <select {...p} value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
                <option value="enable">Turn the flag on</option>
                <option value="disable">Turn the flag off</option>
                <option value="rollout">Set the rollout percentage</option>
                <option value="custom">Custom merge patch (JSON)</option>
              </select>
            )}
          </Field>
          {kind === "rollout" && (
            <Field
              label="Rollout percentage"
              hint={current ? `Now ${current.rollout_percentage ?? 100}%` : undefined}
              error={localErr.patch ?? apiErr?.fieldError("patch")}
            >
              {(p) => (
                <input {...p} type="number" min={0} max={100} step={1} value={rollout} onChange={(e) => setRollout(e.target.value)} />
              )}
            </Field>
          )}
        </div>
        {kind === "custom" && (
          <Field
            label="Merge patch"
            hint="RFC 7396: listed fields are replaced, null clears a field, omitted fields stay as they are."
            error={localErr.patch ?? apiErr?.fieldError("patch")}
          >
            {(p) => <textarea {...p} rows={6} value={custom} onChange={(e) => setCustom(e.target.value)} spellCheck={false} />}
          </Field>
        )}
        {current && kind !== "custom" && (
          <p className="muted">
            {current.key} is now <strong>{current.is_enabled ? "on" : "off"}</strong> at {current.rollout_percentage ?? 100}%
            rollout.
          </p>
        )}
        <ErrorBanner
          error={create.error}
          action="schedule changes in this environment"
          shownFields={kind === "rollout" || kind === "custom" ? ["scheduled_at", "patch"] : ["scheduled_at"]}
        />
        <div className="row">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Schedule change
          </Button>
        </div>
      </form>
    </section>
  );
}
