// Pure formatting and data shaping for the measurement screens (experiments,
// impressions, exposure). Everything here is unit-tested in format.test.ts.
import type { Schemas } from "../../api/client";
import { KEY_PATTERN } from "../../lib/targeting";

export const DASH = "—";

const countFormat = new Intl.NumberFormat("en-US");

export function formatCount(n: number | null | undefined): string {
  return n == null ? DASH : countFormat.format(n);
}

// formatPercent: a rate in [0,1] as "12.3%"; null as "—".
export function formatPercent(rate: number | null | undefined, digits = 1): string {
  if (rate == null || !Number.isFinite(rate)) return DASH;
  return `${(rate * 100).toFixed(digits)}%`;
}

// formatUplift: a relative change as "+12.3%" / "−4.0%" (true minus sign); null as "—".
export function formatUplift(uplift: number | null | undefined): string {
  if (uplift == null || !Number.isFinite(uplift)) return DASH;
  const pct = (uplift * 100).toFixed(1);
  if (Number(pct) === 0) return "0.0%";
  return uplift > 0 ? `+${pct}%` : `\u2212${pct.replace("-", "")}%`;
}

// formatPValue: three significant digits ("0.0457", "0.500"), "< 0.0001" below that; null as "—".
export function formatPValue(p: number | null | undefined): string {
  if (p == null || !Number.isFinite(p)) return DASH;
  if (p < 0.0001) return "< 0.0001";
  return p.toPrecision(3);
}

export function formatZ(z: number | null | undefined): string {
  if (z == null || !Number.isFinite(z)) return DASH;
  return z.toFixed(2);
}

// renderValue renders a flag value the way impressions store it
// (docs/reference/evaluation.md, Rendered values): booleans true/false,
// strings as they are, numbers in shortest decimal form, anything else as
// compact JSON.
export function renderValue(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "boolean" || typeof v === "number") return String(v);
  return JSON.stringify(v ?? null);
}

// flagVariantValues lists the values a flag can serve, rendered as
// impressions render them: the candidates for an experiment's control variant.
export function flagVariantValues(flag: Schemas["Flag"] | undefined): string[] {
  if (!flag) return [];
  const out: string[] = [];
  const add = (v: unknown) => {
    const s = renderValue(v);
    if (!out.includes(s)) out.push(s);
  };
  if (flag.flag_type === "boolean") {
    add(true);
    add(false);
  }
  for (const v of flag.variants) add(v.value);
  if (flag.default_value !== undefined && flag.default_value !== null) add(flag.default_value);
  return out;
}

type WithId = { id: number };

// mergeNewest puts freshly fetched rows (newest first) ahead of the ones
// already shown, drops duplicates by id and keeps at most `max` rows.
export function mergeNewest<T extends WithId>(current: T[], incoming: T[], max = 200): T[] {
  if (incoming.length === 0) return current.length > max ? current.slice(0, max) : current;
  const seen = new Set<number>();
  const out: T[] = [];
  for (const row of [...incoming].sort((a, b) => b.id - a.id).concat(current)) {
    if (seen.has(row.id)) continue;
    seen.add(row.id);
    out.push(row);
    if (out.length >= max) break;
  }
  return out;
}

export function maxId(rows: WithId[]): number | undefined {
  let m: number | undefined;
  for (const r of rows) if (m === undefined || r.id > m) m = r.id;
  return m;
}

// utcDay formats a Date as the YYYY-MM-DD of its UTC day.
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function addDays(day: string, n: number): string {
  const d = new Date(day + "T00:00:00Z");
  d.setUTCDate(d.getUTCDate() + n);
  return utcDay(d);
}

export type Series = { name: string; values: number[]; total: number };
export type Pivot = { days: string[]; series: Series[] };

// pivotTimeline turns the exposure timeline (one row per day and value,
// days without impressions absent) into one series per value over every UTC
// day of the window ending `today`, zero-filled. Series are ordered by total,
// largest first; `order` (e.g. the exposure's variants) wins when given.
export function pivotTimeline(
  timeline: Schemas["ExposureDay"][],
  days: number,
  today: Date = new Date(),
  order: string[] = [],
): Pivot {
  const last = timeline.reduce((m, r) => (r.day > m ? r.day : m), utcDay(today));
  const firstWindow = addDays(last, -(Math.max(1, days) - 1));
  const first = timeline.reduce((m, r) => (r.day < m ? r.day : m), firstWindow);
  const dayList: string[] = [];
  for (let d = first; d <= last; d = addDays(d, 1)) dayList.push(d);
  const index = new Map(dayList.map((d, i) => [d, i]));
  const byValue = new Map<string, number[]>();
  for (const row of timeline) {
    let values = byValue.get(row.value);
    if (!values) {
      values = dayList.map(() => 0);
      byValue.set(row.value, values);
    }
    const i = index.get(row.day);
    if (i !== undefined) values[i] = (values[i] ?? 0) + row.count;
  }
  const series = [...byValue.entries()].map(([name, values]) => ({
    name,
    values,
    total: values.reduce((a, b) => a + b, 0),
  }));
  const rank = (name: string) => {
    const i = order.indexOf(name);
    return i === -1 ? Number.MAX_SAFE_INTEGER : i;
  };
  series.sort((a, b) => rank(a.name) - rank(b.name) || b.total - a.total || a.name.localeCompare(b.name));
  return { days: dayList, series };
}

// share is part/total as a rate, null when total is zero.
export function share(part: number, total: number): number | null {
  return total > 0 ? part / total : null;
}

export function keyProblem(label: string, v: string): string | undefined {
  if (!v) return `${label} is required.`;
  if (v.length > 100) return `${label} must be at most 100 characters.`;
  if (!KEY_PATTERN.test(v)) return `${label} may contain only letters, digits, "_" and "-".`;
  return undefined;
}
