// LiftChart: one guardrail metric's lift and its always-valid interval over
// a release's checks, with the tolerance line (where a regression starts)
// and the zero line. The figure's accessible name and description and the
// "Chart data" table are plain HTML rendered here; only the drawing (uPlot on
// a canvas, LiftCanvas) is loaded lazily, so the release page shows its
// numbers before the charting code arrives, and the first load never carries
// it.
import { lazy, Suspense, useId, useMemo } from "react";
import type { Schemas } from "../../api/client";
import { PALETTE } from "../../components/charts";
import { formatCount, formatPValue, formatUplift } from "../measurement/format";
import type { LiftSeries } from "./LiftCanvas";

const LiftCanvas = lazy(() => import("./LiftCanvas"));

type Check = Schemas["ReleaseAnalysis"];
type MetricCheck = Schemas["ReleaseMetricAnalysis"];
type Metric = Schemas["ReleaseMetric"];

export const COLORS = { lift: PALETTE[0]!, tolerance: PALETTE[1]!, zero: "#1b1f27" };

// badLine is where regression starts, as a lift: −tolerance when a drop is
// bad, +tolerance when a rise is.
export function badLine(m: Pick<Metric, "bad_direction" | "tolerance">): number {
  return m.bad_direction === "decrease" ? -m.tolerance : m.tolerance;
}

export function formatMean(kind: Metric["kind"], v: number): string {
  if (!Number.isFinite(v)) return "—";
  return kind === "conversion" ? `${(v * 100).toFixed(1)}%` : Number(v.toPrecision(3)).toString();
}

// pText: "p = 0.0312", or "p < 0.0001".
export function pText(p: number | null): string {
  const f = formatPValue(p);
  return f.startsWith("<") ? `p ${f}` : `p = ${f}`;
}

export function formatInterval(lo: number | null, hi: number | null): string {
  return lo === null || hi === null ? "—" : `${formatUplift(lo)} to ${formatUplift(hi)}`;
}

// metricRows pairs each check with its analysis of one metric (checks that
// lack it, which a release's fixed metrics never do, are skipped).
export function metricRows(checks: Check[], eventKey: string): { check: Check; m: MetricCheck }[] {
  return checks.flatMap((check) => {
    const m = check.metrics.find((x) => x.event_key === eventKey);
    return m ? [{ check, m }] : [];
  });
}

const when = (iso: string) => new Date(iso).toLocaleString();

export function LiftChart({ metric, checks, stages }: { metric: Metric; checks: Check[]; stages: number }) {
  const id = useId();
  const rows = useMemo(() => metricRows(checks, metric.event_key), [checks, metric.event_key]);
  const title = `Lift of ${metric.event_key} over the checks`;
  const line = badLine(metric);
  const last = rows[rows.length - 1];
  const rule =
    metric.bad_direction === "decrease"
      ? `The release rolls back when the whole interval is below ${formatUplift(line)} (the tolerance).`
      : `The release rolls back when the whole interval is above ${formatUplift(line)} (the tolerance).`;
  const desc = last
    ? `${rows.length} check${rows.length > 1 ? "s" : ""} from ${when(rows[0]!.check.checked_at)} to ${when(last.check.checked_at)}. ` +
      `Latest lift ${formatUplift(last.m.lift)}, interval ${formatInterval(last.m.ci_lower, last.m.ci_upper)}, ${pText(last.m.p_value)}. ${rule}`
    : `No checks yet. ${rule}`;
  // Memoised: polling hands back the same checks until a new one arrives,
  // and the canvas is redrawn only then.
  const series: LiftSeries = useMemo(
    () => ({
      x: rows.map((r) => Date.parse(r.check.checked_at) / 1000),
      lift: rows.map((r) => pct(r.m.lift)),
      lower: rows.map((r) => pct(r.m.ci_lower)),
      upper: rows.map((r) => pct(r.m.ci_upper)),
      line: line * 100,
    }),
    [rows, line],
  );
  return (
    <figure className="chart lift-chart" style={{ margin: 0 }}>
      <div role="img" aria-labelledby={`${id}-t ${id}-d`} className="lift-canvas">
        <span id={`${id}-t`} className="sr-only">
          {title}
        </span>
        <span id={`${id}-d`} className="sr-only">
          {desc}
        </span>
        {rows.length > 0 ? (
          <Suspense fallback={<div className="lift-canvas-loading muted">Loading chart…</div>}>
            <LiftCanvas series={series} colors={COLORS} />
          </Suspense>
        ) : (
          <div className="lift-canvas-loading muted">No checks yet: the chart starts with the first one.</div>
        )}
      </div>
      <ul className="chart-legend" aria-label="Legend">
        <li>
          <span className="swatch swatch-line" style={{ borderColor: COLORS.lift }} aria-hidden="true" /> Lift (treatment vs control)
        </li>
        <li>
          <span className="swatch swatch-band" style={{ background: COLORS.lift }} aria-hidden="true" /> Always-valid interval (band and whiskers)
        </li>
        <li>
          <span className="swatch swatch-dash" style={{ borderColor: COLORS.tolerance }} aria-hidden="true" /> Tolerance (
          {formatUplift(line)})
        </li>
        <li>
          <span className="swatch swatch-thin" style={{ borderColor: COLORS.zero }} aria-hidden="true" /> No change (0 %)
        </li>
      </ul>
      <figcaption className="chart-caption muted">{rule}</figcaption>
      <details className="chart-data">
        <summary>Chart data</summary>
        <div className="table-wrap">
          <table>
            <caption className="sr-only">{title}</caption>
            <thead>
              <tr>
                <th scope="col">Checked</th>
                <th scope="col">Stage</th>
                <th scope="col">Users (treatment / control)</th>
                <th scope="col">Mean (treatment / control)</th>
                <th scope="col">Lift</th>
                <th scope="col">Interval</th>
                <th scope="col">p-value</th>
                <th scope="col">Regressed</th>
              </tr>
            </thead>
            <tbody>
              {rows.map(({ check, m }, i) => (
                <tr key={i}>
                  <th scope="row">
                    <time dateTime={check.checked_at}>{when(check.checked_at)}</time>
                  </th>
                  <td>
                    {check.stage_index + 1} of {stages} ({check.percentage} %)
                  </td>
                  <td className="num">
                    {formatCount(m.treatment.users)} / {formatCount(m.control.users)}
                  </td>
                  <td className="num">
                    {formatMean(m.kind, m.treatment.mean)} / {formatMean(m.kind, m.control.mean)}
                  </td>
                  <td className="num">{formatUplift(m.lift)}</td>
                  <td className="num">{formatInterval(m.ci_lower, m.ci_upper)}</td>
                  <td className="num">{formatPValue(m.p_value)}</td>
                  <td>{m.regressed ? "Yes" : "No"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

function pct(v: number | null): number | null {
  return v === null || !Number.isFinite(v) ? null : v * 100;
}
