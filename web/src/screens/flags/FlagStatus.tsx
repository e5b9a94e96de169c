// Flag status (docs/reference/measurement.md, Flag status): which flags are
// still evaluated, and which can leave the code. One request per environment
// (GET …/flag-status) feeds the flag list's Status and Last evaluated columns
// and the flag page's "Last 7 days" panel. The status is secondary to the
// flags themselves: when it cannot be read the screens still work and say so
// quietly.
import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { errorMessage, unwrap, type Schemas } from "../../api/client";
import { useApi } from "../../api/context";
import { flagStatusKey } from "../../lib/stream";
import { Time } from "../../components/ui";
import { formatCount, formatPercent } from "../measurement/format";

export type FlagStatus = Schemas["FlagStatus"];
export type StatusName = FlagStatus["status"];


// STATUSES in the order the filter offers them, with the words every screen
// uses: a label, and the contract's definition for the tooltip and readers.
export const STATUSES: { value: StatusName; label: string; help: string }[] = [
  { value: "new", label: "New", help: "Created less than 7 days ago and not evaluated yet." },
  {
    value: "active",
    label: "Active",
    help: "Evaluated in the last 7 days, with more than one value or changed in that time.",
  },
  {
    value: "launched",
    label: "Launched",
    help: "Every evaluation in the last 7 days returned the same value and the flag has not changed for 7 days: it can be removed from code.",
  },
  { value: "inactive", label: "Inactive", help: "Not evaluated in the last 7 days." },
];

export function statusInfo(status: StatusName) {
  return STATUSES.find((s) => s.value === status) ?? { value: status, label: status, help: "" };
}

export function isStatusName(v: string): v is StatusName {
  return STATUSES.some((s) => s.value === v);
}

// useFlagStatuses reads the status of every flag of the environment (archived
// ones included) and indexes it by key.
export function useFlagStatuses(envId: string) {
  const api = useApi();
  const query = useQuery({
    queryKey: flagStatusKey(envId),
    queryFn: () => unwrap(api.GET("/api/environments/{env_id}/flag-status", { params: { path: { env_id: envId } } })),
    enabled: !!envId,
  });
  const byKey = new Map((query.data ?? []).map((s) => [s.flag_key, s]));
  return { query, byKey };
}

// StatusBadge shows a status in words; the definition is its tooltip and,
// for screen readers, part of its text.
export function StatusBadge({ status }: { status: StatusName }) {
  const info = statusInfo(status);
  return (
    <span className={`status-badge status-${status}`} title={info.help} data-status={status}>
      {info.label}
      <span className="sr-only">: {info.help}</span>
    </span>
  );
}

// LastEvaluated is a relative time with the exact time as its title, or
// "Never" for a flag no evaluation of which was ever recorded.
export function LastEvaluated({ at }: { at: string | null }) {
  if (at === null) return <span className="muted">Never</span>;
  return <Time value={at} />;
}

// share is one value's part of the evaluations, for the bar and the label.
export function share(count: number, total: number): { percent: number; text: string } {
  if (total <= 0) return { percent: 0, text: formatPercent(0, 0) };
  const rate = count / total;
  // Whole percentages read best; one decimal only where rounding would hide
  // a difference (33.3 %), and a tiny share never reads as 0 %.
  const text = rate > 0 && rate < 0.001 ? "<0.1%" : Number.isInteger(rate * 100) ? formatPercent(rate, 0) : formatPercent(rate, 1);
  return { percent: rate * 100, text };
}

// StatusNote says what the status means for this flag in a sentence; a
// launched flag names the value to keep when the flag leaves the code.
export function StatusNote({ status }: { status: FlagStatus }) {
  switch (status.status) {
    case "launched": {
      const value = status.values_7d[0]?.value ?? "";
      return (
        <p className="status-note status-note-launched">
          <strong>Ready to remove from code.</strong> Every evaluation in the last 7 days returned <code>{value}</code> and the flag
          hasn&apos;t changed for 7 days: it can be removed from code, serving <code>{value}</code>.
        </p>
      );
    }
    case "inactive":
      return (
        <p className="status-note">
          Not evaluated in the last 7 days
          {status.last_evaluated_at ? (
            <>
              {" "}
              (last evaluation <Time value={status.last_evaluated_at} />)
            </>
          ) : (
            " (never evaluated)"
          )}
          . If no code asks for it any more, it can be archived.
        </p>
      );
    case "new":
      return <p className="status-note">Not evaluated yet.</p>;
    default:
      return null;
  }
}

// LastSevenDays is the flag page's panel: status, evaluation count and the
// values those evaluations returned, as a bar list with their shares.
export function LastSevenDays({ envId, flagKey }: { envId: string; flagKey: string }) {
  const { query, byKey } = useFlagStatuses(envId);
  const headingId = useId();
  const status = byKey.get(flagKey);
  const values = [...(status?.values_7d ?? [])].sort((a, b) => b.count - a.count || a.value.localeCompare(b.value));
  return (
    <section className="card editor-section last-7-days" aria-labelledby={headingId}>
      <div className="section-head">
        <h2 id={headingId}>Last 7 days</h2>
        {status && <StatusBadge status={status.status} />}
      </div>
      {query.isPending ? (
        <p className="muted" role="status">
          Loading evaluations…
        </p>
      ) : query.error ? (
        <p className="muted status-unavailable" role="status">
          Evaluations could not be loaded ({errorMessage(query.error)}).
        </p>
      ) : !status ? (
        <p className="muted" role="status">
          No evaluation data for this flag yet.
        </p>
      ) : (
        <>
          <p className="eval-summary">
            <strong>{formatCount(status.evaluations_7d)}</strong> evaluation{status.evaluations_7d === 1 ? "" : "s"}
            <span className="muted">
              {" "}
              · last evaluated <LastEvaluated at={status.last_evaluated_at} />
            </span>
          </p>
          <StatusNote status={status} />
          {values.length > 0 && (
            <ul className="value-bars" aria-label="Evaluations by value, last 7 days">
              {values.map((v) => {
                const s = share(v.count, status.evaluations_7d);
                return (
                  <li key={v.value} className="value-bar">
                    <code className="value-bar-value" title={v.value}>
                      {v.value}
                    </code>
                    <span className="value-bar-track" aria-hidden="true">
                      <span className="value-bar-fill" style={{ width: `${s.percent}%` }} />
                    </span>
                    <span className="value-bar-count num">
                      {formatCount(v.count)} ({s.text})
                    </span>
                  </li>
                );
              })}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
