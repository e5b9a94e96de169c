// The start form of a guarded release (docs/releases.md) as the dashboard
// edits it: stages with durations in friendly units, metrics with the
// tolerance as a percentage, and the advanced settings as text (blank: the
// server's default). formToRequest turns it into the API's body, collecting
// problems under the API's own field paths ("stages.1.percentage"), so that
// the form's and the server's 422 messages land in the same place.
import type { Schemas } from "../../api/client";

export type Release = Schemas["Release"];
export type ReleaseStatus = Schemas["ReleaseStatus"];
export type CreateRelease = Schemas["CreateReleaseRequest"];
export type FieldErrors = Record<string, string>;

export type Unit = "seconds" | "minutes" | "hours" | "days";
export const UNITS: { value: Unit; label: string; seconds: number }[] = [
  { value: "seconds", label: "seconds", seconds: 1 },
  { value: "minutes", label: "minutes", seconds: 60 },
  { value: "hours", label: "hours", seconds: 3600 },
  { value: "days", label: "days", seconds: 86400 },
];

export type StageForm = { percentage: string; amount: string; unit: Unit };
export type MetricForm = {
  event_key: string;
  kind: Schemas["ReleaseMetricKind"];
  bad_direction: Schemas["ReleaseBadDirection"];
  tolerance: string; // percent
  other?: boolean; // the key is typed rather than chosen from the known ones
};
export type PresetName = "careful" | "quick" | "custom";
export type ReleaseForm = {
  preset: PresetName;
  stages: StageForm[];
  metrics: MetricForm[];
  alpha: string;
  min_users: string;
  check_interval_seconds: string;
};

// Limits of the API (api/openapi.yaml, CreateReleaseRequest).
export const MAX_STAGES = 10;
export const MAX_METRICS = 5;
export const MAX_STAGE_SECONDS = 30 * 86400;

const stage = (percentage: number, amount: number, unit: Unit): StageForm => ({
  percentage: String(percentage),
  amount: String(amount),
  unit,
});

// PRESETS: the careful ramp starts at 1 % and gives the later stages a day,
// a full daily cycle; the quick one suits a change with fast metrics.
export const PRESETS: { value: Exclude<PresetName, "custom">; label: string; stages: StageForm[] }[] = [
  {
    value: "careful",
    label: "Careful: 1 → 5 → 25 → 50 → 100 %",
    stages: [stage(1, 1, "hours"), stage(5, 1, "hours"), stage(25, 2, "hours"), stage(50, 1, "days"), stage(100, 1, "days")],
  },
  {
    value: "quick",
    label: "Quick: 10 → 50 → 100 %",
    stages: [stage(10, 30, "minutes"), stage(50, 30, "minutes"), stage(100, 1, "hours")],
  },
];

export function presetStages(name: Exclude<PresetName, "custom">): StageForm[] {
  return (PRESETS.find((p) => p.value === name)?.stages ?? []).map((s) => ({ ...s }));
}

export function emptyMetric(eventKey = ""): MetricForm {
  return { event_key: eventKey, kind: "conversion", bad_direction: "decrease", tolerance: "2" };
}

export function emptyForm(): ReleaseForm {
  return { preset: "careful", stages: presetStages("careful"), metrics: [emptyMetric()], alpha: "", min_users: "", check_interval_seconds: "" };
}

// nextStage is the row "Add stage" appends: halfway from the last percentage to 100.
export function nextStage(stages: StageForm[]): StageForm {
  const last = stages[stages.length - 1];
  const from = last ? Number(last.percentage) || 0 : 0;
  const pct = Math.min(100, Math.max(from + 1, Math.round((from + 100) / 2)));
  return { percentage: String(pct), amount: last?.amount ?? "1", unit: last?.unit ?? "hours" };
}

const INT = /^\d+$/;
const NUM = /^\d+(\.\d+)?$|^\.\d+$/;

// stageSeconds is a stage row's duration in seconds, or NaN.
export function stageSeconds(s: StageForm): number {
  const amount = s.amount.trim();
  if (!INT.test(amount)) return NaN;
  return Number(amount) * (UNITS.find((u) => u.value === s.unit)?.seconds ?? NaN);
}

// formatDuration writes seconds in the largest units that fit, at most two:
// "2 s", "30 min", "1 h 30 min", "1 d".
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "—";
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const parts: [number, string][] = [
    [Math.floor(seconds / 86400), "d"],
    [Math.floor((seconds % 86400) / 3600), "h"],
    [Math.floor((seconds % 3600) / 60), "min"],
    [Math.floor(seconds % 60), "s"],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, u]) => `${n} ${u}`)
    .join(" ");
}

// tolerance converts a percentage as typed ("2", "0.5") to the API's fraction.
export function toleranceFraction(percent: string): number {
  return Number((Number(percent) / 100).toPrecision(12));
}

// formToRequest validates the form as the server does and builds the body.
// Blank advanced settings are left out: the server's defaults apply.
export function formToRequest(form: ReleaseForm): { body: CreateRelease; errors: FieldErrors } {
  const errors: FieldErrors = {};
  if (form.stages.length < 1 || form.stages.length > MAX_STAGES) errors.stages = `Add 1 to ${MAX_STAGES} stages.`;
  let before = 0;
  const stages = form.stages.map((s, i) => {
    const p = s.percentage.trim();
    const pct = INT.test(p) ? Number(p) : NaN;
    if (!(pct >= 1 && pct <= 100)) errors[`stages.${i}.percentage`] = "A whole percentage from 1 to 100.";
    else if (pct <= before) errors[`stages.${i}.percentage`] = `Must be more than the stage before (${before} %).`;
    if (pct >= 1) before = pct;
    const secs = stageSeconds(s);
    if (!(secs >= 1 && secs <= MAX_STAGE_SECONDS)) errors[`stages.${i}.duration_seconds`] = "A whole number, from 1 second to 30 days.";
    return { percentage: pct, duration_seconds: secs };
  });

  if (form.metrics.length < 1 || form.metrics.length > MAX_METRICS) errors.metrics = `Choose 1 to ${MAX_METRICS} metrics.`;
  const seen = new Set<string>();
  const metrics = form.metrics.map((m, i) => {
    const key = m.event_key.trim();
    if (!key) errors[`metrics.${i}.event_key`] = "Choose the goal event to watch.";
    else if (!/^[A-Za-z0-9_-]{1,100}$/.test(key)) errors[`metrics.${i}.event_key`] = "1 to 100 letters, digits, _ or -.";
    else if (seen.has(key)) errors[`metrics.${i}.event_key`] = "This event is already a metric of the release.";
    seen.add(key);
    const tol = m.tolerance.trim();
    const pct = NUM.test(tol) ? Number(tol) : NaN;
    if (!(pct >= 0 && pct <= 1000)) errors[`metrics.${i}.tolerance`] = "A percentage from 0 to 1000.";
    return { event_key: key, kind: m.kind, bad_direction: m.bad_direction, tolerance: toleranceFraction(tol) };
  });

  const body: CreateRelease = { stages, metrics };
  const alpha = form.alpha.trim();
  if (alpha) {
    const a = NUM.test(alpha) ? Number(alpha) : NaN;
    if (!(a > 0 && a <= 0.5)) errors.alpha = "A number greater than 0 and at most 0.5.";
    body.alpha = a;
  }
  const minUsers = form.min_users.trim();
  if (minUsers) {
    const n = INT.test(minUsers) ? Number(minUsers) : NaN;
    if (!(n >= 1 && n <= 2147483647)) errors.min_users = "A whole number of at least 1.";
    body.min_users = n;
  }
  const interval = form.check_interval_seconds.trim();
  if (interval) {
    const n = INT.test(interval) ? Number(interval) : NaN;
    if (!(n >= 1 && n <= 86400)) errors.check_interval_seconds = "Whole seconds, from 1 to 86400.";
    body.check_interval_seconds = n;
  }
  return { body, errors };
}

// isActive: a running or paused release still guards its flag.
export function isActive(status: ReleaseStatus): boolean {
  return status === "running" || status === "paused";
}

export const STATUS_LABEL: Record<ReleaseStatus, string> = {
  running: "Running",
  paused: "Paused",
  completed: "Completed",
  rolled_back: "Rolled back",
  cancelled: "Cancelled",
};

export const RELEASE_STATUSES = Object.keys(STATUS_LABEL) as ReleaseStatus[];

export function isReleaseStatus(v: string): v is ReleaseStatus {
  return (RELEASE_STATUSES as string[]).includes(v);
}

// blocker says why a flag cannot start a guarded release, or null when it
// can (docs/releases.md: boolean, not archived, no approval required, no
// release running or paused).
export function blocker(
  flag: Pick<Schemas["Flag"], "flag_type" | "archived_at">,
  env: { name: string; require_approval: boolean } | undefined,
  active: Release | undefined,
): { kind: "type" | "archived" | "approval" | "active"; text: string } | null {
  if (flag.flag_type !== "boolean")
    return { kind: "type", text: `Guarded releases ramp boolean flags; this one is a ${flag.flag_type} flag.` };
  if (flag.archived_at) return { kind: "archived", text: "The flag is archived: unarchive it to start a guarded release." };
  if (env?.require_approval)
    return {
      kind: "approval",
      text: `${env.name} requires approval for flag changes, and a release changes the flag by itself: guarded releases cannot start here.`,
    };
  if (active) return { kind: "active", text: `A guarded release of this flag is ${active.status}.` };
  return null;
}
