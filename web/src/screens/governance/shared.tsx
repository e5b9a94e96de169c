// Pieces the governance screens share: patch summaries and the
// local-time <-> RFC 3339 helpers.

// asRecord widens the generated `Record<string, never>` of free-form objects.
export function asRecord(v: unknown): Record<string, unknown> | null {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

// patchSummary describes a flag merge patch in a few words for lists.
export function patchSummary(patch: unknown): string {
  const p = asRecord(patch) ?? {};
  const parts: string[] = [];
  for (const [k, v] of Object.entries(p)) {
    if (k === "key") continue;
    if (k === "is_enabled") parts.push(v ? "turn on" : "turn off");
    else if (k === "rollout_percentage") parts.push(v === null ? "rollout 100%" : `rollout ${String(v)}%`);
    else if (Array.isArray(v)) parts.push(`set ${k} (${v.length})`);
    else if (v === null) parts.push(`clear ${k}`);
    else parts.push(`set ${k}`);
  }
  if (parts.length === 0) return "no change";
  const s = parts.join(", ");
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// pickFields is the part of the flag a patch touches, to compare with the patch.
export function pickFields(flag: unknown, fields: string[]): Record<string, unknown> | null {
  const f = asRecord(flag);
  if (!f) return null;
  return Object.fromEntries(fields.map((k) => [k, f[k]]));
}

function pad(n: number): string {
  return String(Math.abs(Math.trunc(n))).padStart(2, "0");
}

// offsetString is a Date's local UTC offset as "+01:00".
export function offsetString(d: Date): string {
  const minutes = -d.getTimezoneOffset();
  const sign = minutes >= 0 ? "+" : "-";
  return `${sign}${pad(minutes / 60)}:${pad(minutes % 60)}`;
}

// toRfc3339Local turns a datetime-local value ("2026-11-22T09:30") into
// RFC 3339 with the browser's offset ("2026-11-22T09:30:00+01:00"); "" when invalid.
export function toRfc3339Local(value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return "";
  const [, y = "", mo = "", da = "", h = "", mi = "", se = "00"] = m;
  const d = new Date(+y, +mo - 1, +da, +h, +mi, +se);
  // Reject dates the calendar does not have (e.g. 2026-02-30 rolls over).
  if (Number.isNaN(d.getTime()) || d.getDate() !== +da || d.getMonth() !== +mo - 1) return "";
  return `${y}-${mo}-${da}T${h}:${mi}:${se}${offsetString(d)}`;
}

// toLocalInput is a Date as a datetime-local value (minutes precision).
export function toLocalInput(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function localZoneLabel(at = new Date()): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";
  return `${zone} (UTC${offsetString(at)})`;
}

export function formatDateTime(value?: string | null): string {
  if (!value) return "—";
  return new Date(value).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
