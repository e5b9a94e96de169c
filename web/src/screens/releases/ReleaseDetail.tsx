// One guarded release: its status and reason, every stage with the current
// one marked, the actions its status allows (roll back and cancel asked
// first), the latest check, and per metric a chart of the lift and its
// interval over every check. Read again every 5 s while the release guards
// its flag, and on every update of the environment's live stream.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link, useParams } from "react-router";
import { ApiError, unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Button, ConfirmDialog, Empty, ErrorBanner, Loading, Notice, PageHeader, Time } from "../../components/ui";
import { envPath, useScope } from "../../lib/session";
import { flagKeys, releasesKey } from "../../lib/stream";
import { formatCount, formatUplift } from "../measurement/format";
import { POLL_MS, ReleaseStatusPill, releaseKeys, stageText } from "./common";
import { LiftChart, badLine, formatInterval, pText } from "./LiftChart";
import { STATUS_LABEL, formatDuration, isActive, type Release } from "./releaseform";
import "./releases.css";

type Action = "pause" | "resume" | "rollback" | "cancel";

// allowed: which actions a status allows (docs/releases.md, What people can do).
export function allowed(status: Release["status"]): Record<Action, boolean> {
  return {
    pause: status === "running",
    resume: status === "paused",
    rollback: isActive(status),
    cancel: isActive(status),
  };
}

// summary says in one sentence where the release stands.
export function summary(r: Release, now = Date.now()): string {
  const st = r.stages[r.stage_index];
  switch (r.status) {
    case "running": {
      if (!st) return `Running at ${stageText(r)}.`;
      const left = Date.parse(r.stage_started_at) / 1000 + st.duration_seconds - now / 1000;
      const next = r.stage_index + 1 < r.stages.length ? "the next stage" : "completion";
      return `Running at ${stageText(r)}; ${left > 0 ? `${next} in about ${formatDuration(left)}` : `${next} at the next check`}.`;
    }
    case "paused":
      return `Paused at ${stageText(r)}: the percentage stays and the guard keeps watching.`;
    case "completed":
      return `Completed: every stage ran its time with no metric worse; the flag stays at ${st?.percentage ?? "?"} %.`;
    case "rolled_back":
      return `Rolled back at ${stageText(r)}: the flag’s rollout is 0 %.`;
    case "cancelled":
      return `Cancelled at ${stageText(r)}: guarding stopped and the flag was left as it was.`;
  }
}

export default function ReleaseDetail() {
  const { id = "" } = useParams();
  const { projectId, envId } = useScope();
  const api = useApi();
  const queryClient = useQueryClient();
  const path = { env_id: envId, id };
  const poll = (status?: Release["status"]) => (status && isActive(status) ? POLL_MS : false);
  const release = useQuery({
    queryKey: releaseKeys.one(envId, id),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/releases/{id}", { params: { path } })),
    enabled: !!envId && !!id,
    refetchInterval: (q) => poll(q.state.data?.status),
  });
  const status = release.data?.status;
  const checks = useQuery({
    queryKey: releaseKeys.checks(envId, id),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/releases/{id}/checks", { params: { path } })),
    enabled: !!envId && !!id,
    refetchInterval: () => poll(status),
  });
  // A new check or stage shows up in both: read the checks again when the release moves on.
  const updatedAt = release.data?.updated_at;
  const checkedAt = release.data?.analysis?.checked_at;
  useEffect(() => {
    if (updatedAt || checkedAt) void queryClient.invalidateQueries({ queryKey: releaseKeys.checks(envId, id) });
  }, [updatedAt, checkedAt, envId, id, queryClient]);

  const [confirm, setConfirm] = useState<"rollback" | "cancel" | null>(null);
  const act = useMutation({
    mutationFn: (action: Action) => {
      const opts = { params: { path } };
      switch (action) {
        case "pause":
          return unwrap(api.POST("/api/environments/{env_id}/releases/{id}/pause", opts));
        case "resume":
          return unwrap(api.POST("/api/environments/{env_id}/releases/{id}/resume", opts));
        case "rollback":
          return unwrap(api.POST("/api/environments/{env_id}/releases/{id}/rollback", opts));
        case "cancel":
          return unwrap(api.POST("/api/environments/{env_id}/releases/{id}/cancel", opts));
      }
    },
    onSuccess: (r) => {
      queryClient.setQueryData(releaseKeys.one(envId, id), r);
      void queryClient.invalidateQueries({ queryKey: releasesKey(envId) });
      void queryClient.invalidateQueries({ queryKey: flagKeys.one(envId, r.flag_key) });
      setConfirm(null);
    },
  });

  const back = envPath(projectId, envId, "releases");
  if (release.isPending) return <Loading label="Loading release…" />;
  if (release.error) {
    const notFound = release.error instanceof ApiError && (release.error.status === 404 || release.error.status === 422);
    return (
      <div className="releases">
        <PageHeader title="Guarded release" />
        {notFound ? (
          <Empty title="Release not found">
            <p>
              There is no such release in this environment. <Link to={back}>All releases</Link>
            </p>
          </Empty>
        ) : (
          <ErrorBanner error={release.error} action="view the releases of this environment" />
        )}
      </div>
    );
  }
  const r = release.data;
  const can = allowed(r.status);
  const a = r.analysis;
  const flagLink = (
    <Link to={envPath(projectId, envId, `flags/${encodeURIComponent(r.flag_key)}`)}>
      <code>{r.flag_key}</code>
    </Link>
  );

  return (
    <div className="releases release-detail">
      <p>
        <Link to={back}>← Releases</Link>
      </p>
      <PageHeader
        title={
          <>
            Release of <code>{r.flag_key}</code> <ReleaseStatusPill status={r.status} />
          </>
        }
        actions={
          <>
            <Button disabled={!can.pause} busy={act.isPending && act.variables === "pause"} onClick={() => act.mutate("pause")}>
              Pause
            </Button>
            <Button disabled={!can.resume} busy={act.isPending && act.variables === "resume"} onClick={() => act.mutate("resume")}>
              Resume
            </Button>
            <Button variant="danger" disabled={!can.rollback} onClick={() => setConfirm("rollback")}>
              Roll back
            </Button>
            <Button disabled={!can.cancel} onClick={() => setConfirm("cancel")}>
              Cancel release
            </Button>
          </>
        }
      >
        Flag {flagLink} · started <Time value={r.started_at} />
        {r.ended_at && (
          <>
            {" "}
            · ended <Time value={r.ended_at} />
          </>
        )}
      </PageHeader>

      <div aria-live="polite">
        <p className="release-summary" data-testid="release-summary">
          <strong>{summary(r)}</strong>
        </p>
        {r.reason && (
          <div
            className={`banner ${r.status === "rolled_back" ? "banner-error" : r.status === "paused" ? "banner-warning" : "banner-info"}`}
            role="status"
            data-testid="release-reason"
          >
            <strong>{STATUS_LABEL[r.status]}:</strong> {r.reason}
          </div>
        )}
        {isActive(r.status) && (
          <p className="muted">
            Checks every {formatDuration(r.check_interval_seconds)} and at each stage’s end · this page refreshes every{" "}
            {POLL_MS / 1000} s
          </p>
        )}
      </div>
      {act.error && !confirm && <ErrorBanner error={act.error} action="act on releases in this environment" />}

      <section aria-labelledby="stages-h" className="card editor-section">
        <h2 id="stages-h">Stages</h2>
        <ol className="release-stages">
          {r.stages.map((s, i) => {
            const state = i < r.stage_index ? "done" : i === r.stage_index ? "current" : isActive(r.status) ? "next" : "skipped";
            const word = { done: "done", current: isActive(r.status) ? "now" : "last", next: "to come", skipped: "not reached" }[state];
            return (
              <li key={i} className={`release-stage stage-${state}`} aria-current={i === r.stage_index ? "step" : undefined}>
                <span className="stage-pct">{s.percentage} %</span>
                <span className="stage-meta">
                  Stage {i + 1} · {formatDuration(s.duration_seconds)}
                </span>
                <span className="stage-state">{word}</span>
              </li>
            );
          })}
        </ol>
        <p className="muted">
          Before the release the flag’s rollout was{" "}
          {r.previous_rollout_percentage === null ? "unset (everyone)" : `${r.previous_rollout_percentage} %`}. Minimum users per
          arm {formatCount(r.min_users)} · alpha {r.alpha}
        </p>
      </section>

      <section aria-labelledby="latest-h" className="card editor-section">
        <h2 id="latest-h">Latest check</h2>
        {a ? (
          <>
            <dl className="stats">
              <div>
                <dt>Checked</dt>
                <dd>
                  <Time value={a.checked_at} />
                </dd>
              </div>
              <div>
                <dt>Treatment users</dt>
                <dd>{formatCount(a.treatment_users)}</dd>
              </div>
              <div>
                <dt>Control users</dt>
                <dd>{formatCount(a.control_users)}</dd>
              </div>
              <div>
                <dt>Sample ratio</dt>
                <dd>
                  {a.srm === null ? "not checked" : a.srm.mismatch ? "mismatch" : "ok"}
                </dd>
              </div>
            </dl>
            {a.srm && (
              <p className="muted">
                Of {formatCount(a.srm.users)} users first exposed in this stage, {formatCount(a.srm.treatment_users)} got the change
                (expected {(a.srm.expected_share * 100).toFixed(0)} %, {pText(a.srm.p_value)}).
              </p>
            )}
          </>
        ) : (
          <p className="muted">
            No check yet. Results need exposures of <code>{r.flag_key}</code> reported with a user key and the metrics’ goal
            events for the same users.
          </p>
        )}
      </section>

      <section aria-labelledby="metrics-h" className="release-metrics">
        <h2 id="metrics-h">Guardrail metrics</h2>
        <ErrorBanner error={checks.error} action="view the checks of this release" />
        {r.metrics.map((m) => {
          const latest = a?.metrics.find((x) => x.event_key === m.event_key);
          return (
            <article key={m.event_key} className="card editor-section metric-card" aria-labelledby={`metric-${m.event_key}`}>
              <h3 id={`metric-${m.event_key}`}>
                <code>{m.event_key}</code>{" "}
                <span className="muted">
                  {m.kind} · {m.bad_direction === "decrease" ? "a drop is bad" : "a rise is bad"} · tolerance{" "}
                  {formatUplift(badLine(m))}
                </span>{" "}
                {latest?.regressed && <span className="pill pill-danger">regressed</span>}
              </h3>
              {latest && (
                <p>
                  Lift {formatUplift(latest.lift)}, interval {formatInterval(latest.ci_lower, latest.ci_upper)},{" "}
                  {pText(latest.p_value)} ({formatCount(latest.treatment.users)} treatment /{" "}
                  {formatCount(latest.control.users)} control users)
                </p>
              )}
              {checks.data ? (
                <LiftChart metric={m} checks={checks.data} stages={r.stages.length} />
              ) : (
                !checks.error && <Loading label="Loading checks…" />
              )}
            </article>
          );
        })}
      </section>

      {confirm && (
        <ConfirmDialog
          title={confirm === "rollback" ? "Roll back this release?" : "Cancel this release?"}
          confirmLabel={confirm === "rollback" ? "Roll back to 0 %" : "Cancel release"}
          cancelLabel="Keep it"
          busy={act.isPending}
          error={act.error}
          action="act on releases in this environment"
          onConfirm={() => act.mutate(confirm)}
          onClose={() => {
            setConfirm(null);
            act.reset();
          }}
        >
          {confirm === "rollback" ? (
            <p>
              The flag {flagLink}’s rollout becomes 0 % now: nobody gets <code>true</code>. The release ends.
            </p>
          ) : (
            <p>
              Guarding stops and the flag {flagLink} stays at {r.stages[r.stage_index]?.percentage ?? "?"} %. No metric will roll
              it back any more.
            </p>
          )}
        </ConfirmDialog>
      )}
      {!isActive(r.status) && r.status !== "completed" && !r.reason && <Notice>{STATUS_LABEL[r.status]}.</Notice>}
    </div>
  );
}
