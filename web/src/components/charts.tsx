// Small hand-written SVG charts. Each has a <title>/<desc>, labelled axes and
// a "Chart data" table with the same numbers; colours come from the
// Okabe–Ito palette (distinguishable with the common colour-vision
// deficiencies), and lines also differ by dash pattern and marker shape.
import { useId } from "react";

export const PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000", "#999999"];
const DASHES = ["", "6 3", "2 3", "8 3 2 3", "", "6 3", "2 3", "8 3 2 3"];

export function seriesColor(i: number): string {
  return PALETTE[i % PALETTE.length] ?? "#000000";
}

export type Interval = { lower: number; upper: number };

// wilsonInterval is the Wilson score interval for a binomial proportion
// (successes out of n) at the given z (1.96 = 95%). We use Wilson rather than
// the normal approximation because it stays inside [0,1] and behaves at
// rates near 0 or 1 and with small samples — common for fresh experiments.
//   centre = (p + z²/2n) / (1 + z²/n)
//   half   = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)
// Returns null when n is 0 (no interval).
export function wilsonInterval(successes: number, n: number, z = 1.96): Interval | null {
  if (!(n > 0)) return null;
  const p = Math.min(1, Math.max(0, successes / n));
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { lower: Math.max(0, centre - half), upper: Math.min(1, centre + half) };
}

// niceMax rounds a maximum up to 1, 2, 2.5 or 5 times a power of ten so
// axis ticks land on round numbers.
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const pow = Math.pow(10, Math.floor(Math.log10(max)));
  for (const m of [1, 2, 2.5, 5, 10]) {
    if (max <= m * pow + 1e-12) return m * pow;
  }
  return 10 * pow;
}

function ticks(max: number, count = 4): number[] {
  return Array.from({ length: count + 1 }, (_, i) => (max * i) / count);
}

// Presentation attributes rather than CSS classes, so the charts render the
// same wherever they are used.
const S = {
  grid: { stroke: "#e3e6eb" },
  axis: { stroke: "#8b93a3" },
  tick: { fontSize: 11, fill: "#5a6270" },
  label: { fontSize: 12, fill: "#1b1f27", fontWeight: 600 },
  whisker: { stroke: "#1b1f27", strokeWidth: 1.5 },
} as const;

const LEGEND = { listStyle: "none", margin: "4px 0 0", padding: 0, display: "flex", flexWrap: "wrap", gap: "4px 16px" } as const;

const pct = (v: number, digits = 1) => `${(v * 100).toFixed(digits)}%`;
const tickPct = (v: number) => `${Number((v * 100).toFixed(2))}%`;
const count = new Intl.NumberFormat("en-US");

export type ConversionBar = {
  label: string;
  converted: number;
  exposed: number;
  isControl?: boolean;
};

// ConversionChart: conversion rate by variant, with 95% Wilson intervals as whiskers.
export function ConversionChart({ title, bars }: { title: string; bars: ConversionBar[] }) {
  const id = useId();
  const rows = bars.map((b) => ({
    ...b,
    rate: b.exposed > 0 ? b.converted / b.exposed : 0,
    ci: wilsonInterval(b.converted, b.exposed),
  }));
  const top = niceMax(Math.max(0, ...rows.map((r) => r.ci?.upper ?? r.rate)));
  const W = 640;
  const H = 280;
  const m = { top: 16, right: 16, bottom: 56, left: 64 };
  const iw = W - m.left - m.right;
  const ih = H - m.top - m.bottom;
  const slot = rows.length ? iw / rows.length : iw;
  const barW = Math.min(80, slot * 0.55);
  const y = (v: number) => m.top + ih - (v / top) * ih;
  const desc = rows
    .map(
      (r) =>
        `${r.label}${r.isControl ? " (control)" : ""}: ${pct(r.rate)} of ${count.format(r.exposed)} users` +
        (r.ci ? `, 95% interval ${pct(r.ci.lower)} to ${pct(r.ci.upper)}` : ""),
    )
    .join("; ");
  return (
    <figure className="chart" style={{ margin: 0 }}>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-t ${id}-d`} width="100%" style={{ maxWidth: W, height: "auto", display: "block" }}>
        <title id={`${id}-t`}>{title}</title>
        <desc id={`${id}-d`}>{desc || "No data."}</desc>
        {ticks(top).map((t) => (
          <g key={t}>
            <line x1={m.left} x2={W - m.right} y1={y(t)} y2={y(t)} {...S.grid} />
            <text x={m.left - 8} y={y(t)} dy="0.32em" textAnchor="end" {...S.tick}>
              {tickPct(t)}
            </text>
          </g>
        ))}
        {rows.map((r, i) => {
          const cx = m.left + slot * i + slot / 2;
          const color = seriesColor(i);
          return (
            <g key={r.label}>
              <rect
                x={cx - barW / 2}
                y={y(r.rate)}
                width={barW}
                height={Math.max(0, m.top + ih - y(r.rate))}
                fill={color}
                fillOpacity={r.isControl ? 0.45 : 0.85}
                stroke={color}
                strokeWidth={r.isControl ? 2 : 0}
                strokeDasharray={r.isControl ? "4 2" : undefined}
              />
              {r.ci && (
                <g {...S.whisker}>
                  <line x1={cx} x2={cx} y1={y(r.ci.lower)} y2={y(r.ci.upper)} />
                  <line x1={cx - 8} x2={cx + 8} y1={y(r.ci.lower)} y2={y(r.ci.lower)} />
                  <line x1={cx - 8} x2={cx + 8} y1={y(r.ci.upper)} y2={y(r.ci.upper)} />
                </g>
              )}
              <text x={cx} y={m.top + ih + 18} textAnchor="middle" {...S.tick}>
                {truncate(r.label, 18)}
              </text>
              {r.isControl && (
                <text x={cx} y={m.top + ih + 32} textAnchor="middle" {...S.tick}>
                  control
                </text>
              )}
            </g>
          );
        })}
        <line x1={m.left} x2={W - m.right} y1={m.top + ih} y2={m.top + ih} {...S.axis} />
        <text x={m.left + iw / 2} y={H - 6} textAnchor="middle" {...S.label}>
          Variant
        </text>
        <text transform={`translate(14 ${m.top + ih / 2}) rotate(-90)`} textAnchor="middle" {...S.label}>
          Conversion rate
        </text>
      </svg>
      <figcaption className="chart-caption muted">Bars: conversion rate. Whiskers: 95% confidence interval (Wilson).</figcaption>
      <details className="chart-data" style={{ marginTop: 8 }}>
        <summary>Chart data</summary>
        <div className="table-wrap">
          <table>
            <caption className="sr-only">{title}</caption>
            <thead>
              <tr>
                <th scope="col">Variant</th>
                <th scope="col">Converted / exposed</th>
                <th scope="col">Rate</th>
                <th scope="col">95% interval</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.label}>
                  <th scope="row">
                    {r.label}
                    {r.isControl ? " (control)" : ""}
                  </th>
                  <td>
                    {count.format(r.converted)} / {count.format(r.exposed)}
                  </td>
                  <td>{r.exposed > 0 ? pct(r.rate) : "—"}</td>
                  <td>{r.ci ? `${pct(r.ci.lower)} – ${pct(r.ci.upper)}` : "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

export type TimelineSeries = { name: string; values: number[] };

// TimelineChart: one line per series over days (YYYY-MM-DD), e.g. daily exposure per variant.
export function TimelineChart({
  title,
  days,
  series,
  yLabel = "Impressions",
}: {
  title: string;
  days: string[];
  series: TimelineSeries[];
  yLabel?: string;
}) {
  const id = useId();
  const W = 720;
  const H = 260;
  const m = { top: 16, right: 16, bottom: 48, left: 56 };
  const iw = W - m.left - m.right;
  const ih = H - m.top - m.bottom;
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const x = (i: number) => m.left + (days.length > 1 ? (i / (days.length - 1)) * iw : iw / 2);
  const y = (v: number) => m.top + ih - (v / max) * ih;
  const labelEvery = Math.max(1, Math.ceil(days.length / 8));
  const desc =
    series
      .map((s) => `${s.name}: ${count.format(s.values.reduce((a, b) => a + b, 0))} in total`)
      .join("; ") + (days.length ? `, from ${days[0]} to ${days[days.length - 1]} (UTC days).` : "");
  return (
    <figure className="chart" style={{ margin: 0 }}>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-t ${id}-d`} width="100%" style={{ maxWidth: W, height: "auto", display: "block" }}>
        <title id={`${id}-t`}>{title}</title>
        <desc id={`${id}-d`}>{series.length ? desc : "No data."}</desc>
        {ticks(max).map((t) => (
          <g key={t}>
            <line x1={m.left} x2={W - m.right} y1={y(t)} y2={y(t)} {...S.grid} />
            <text x={m.left - 8} y={y(t)} dy="0.32em" textAnchor="end" {...S.tick}>
              {count.format(Number(t.toFixed(2)))}
            </text>
          </g>
        ))}
        {days.map((d, i) =>
          i % labelEvery === 0 || i === days.length - 1 ? (
            <text key={d} x={x(i)} y={m.top + ih + 16} textAnchor="middle" {...S.tick}>
              {d.slice(5)}
            </text>
          ) : null,
        )}
        {series.map((s, si) => {
          const color = seriesColor(si);
          const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
          return (
            <g key={s.name}>
              <polyline points={points} fill="none" stroke={color} strokeWidth={2} strokeDasharray={DASHES[si % DASHES.length] || undefined} />
              {days.length <= 31 &&
                s.values.map((v, i) => <Marker key={i} shape={si % 3} cx={x(i)} cy={y(v)} color={color} />)}
            </g>
          );
        })}
        <line x1={m.left} x2={W - m.right} y1={m.top + ih} y2={m.top + ih} {...S.axis} />
        <text x={m.left + iw / 2} y={H - 6} textAnchor="middle" {...S.label}>
          Day (UTC)
        </text>
        <text transform={`translate(14 ${m.top + ih / 2}) rotate(-90)`} textAnchor="middle" {...S.label}>
          {yLabel}
        </text>
      </svg>
      <ul className="chart-legend" aria-label="Legend" style={LEGEND}>
        {series.map((s, si) => (
          <li key={s.name} style={{ display: "inline-flex", alignItems: "center", gap: 6 }}>
            <svg width="28" height="10" aria-hidden="true">
              <line x1="0" x2="28" y1="5" y2="5" stroke={seriesColor(si)} strokeWidth="2" strokeDasharray={DASHES[si % DASHES.length] || undefined} />
            </svg>
            {s.name}
          </li>
        ))}
      </ul>
      <details className="chart-data" style={{ marginTop: 8 }}>
        <summary>Chart data</summary>
        <div className="table-wrap">
          <table>
            <caption className="sr-only">{title}</caption>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                {series.map((s) => (
                  <th scope="col" key={s.name}>
                    {s.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {days.map((d, i) => (
                <tr key={d}>
                  <th scope="row">{d}</th>
                  {series.map((s) => (
                    <td key={s.name}>{count.format(s.values[i] ?? 0)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

function Marker({ shape, cx, cy, color }: { shape: number; cx: number; cy: number; color: string }) {
  if (shape === 1) return <rect x={cx - 3} y={cy - 3} width={6} height={6} fill={color} />;
  if (shape === 2) return <path d={`M${cx} ${cy - 4}L${cx + 4} ${cy + 3}L${cx - 4} ${cy + 3}Z`} fill={color} />;
  return <circle cx={cx} cy={cy} r={3} fill={color} />;
}

function truncate(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}
