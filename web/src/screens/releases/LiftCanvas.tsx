// The drawing of a LiftChart, with uPlot on a canvas: the lift as a line with
// points, its interval as a shaded band and whiskers, the tolerance as a
// dashed line and zero as a thin one, over the checks' times. A chunk of its own, loaded
// only when a release page draws its first chart (docs/dashboard.md, Size).
// The numbers, the accessible name and the data table are LiftChart's.
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export type LiftSeries = {
  x: number[]; // check times, Unix seconds
  lift: (number | null)[]; // percent
  lower: (number | null)[];
  upper: (number | null)[];
  line: number; // the tolerance as a lift, percent
};

const HEIGHT = 240;
const AXIS = { stroke: "#5a6270", grid: { stroke: "#e3e6eb", width: 1 }, ticks: { stroke: "#c9ced8", width: 1 } };

// yRange covers the lift, the tolerance and zero, but not an interval that
// is still enormous after a few users: the band is clipped at the edge.
function yRange(s: LiftSeries): uPlot.Range.Function {
  return (_u, dataMin, dataMax) => {
    const lifts = s.lift.filter((v): v is number => v !== null);
    const reach = Math.max(10, 3 * Math.abs(s.line), ...lifts.map((v) => 2 * Math.abs(v)));
    const lo = Math.max(Math.min(dataMin ?? 0, s.line, 0), -reach);
    const hi = Math.min(Math.max(dataMax ?? 0, s.line, 0), reach);
    const pad = (hi - lo) * 0.08 || 1;
    return [lo - pad, hi + pad];
  };
}

// xRange spans the checks, and at least a minute, so that checks a second
// apart do not get sub-second ticks. (uPlot's own range for a single time
// point is 1000 days wide when times are in seconds: computed here instead.)
function xRange(s: LiftSeries): uPlot.Range.Function {
  return () => {
    const min = Math.min(...s.x);
    const max = Math.max(...s.x);
    if (max - min >= 60) return [min, max];
    const mid = (min + max) / 2;
    return [mid - 30, mid + 30];
  };
}

// overlay draws what the series cannot: the tolerance and zero lines across
// the whole plot (with one check a series would be a lone point), and a
// whisker for every check's interval (a band needs two neighbouring checks).
function overlay(u: uPlot, s: LiftSeries, colors: { lift: string; tolerance: string; zero: string }) {
  const ctx = u.ctx;
  const px = devicePixelRatio || 1;
  const { left, top, width, height } = u.bbox;
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top, width, height);
  ctx.clip();
  const hline = (value: number, color: string, w: number, dash: number[]) => {
    const y = Math.round(u.valToPos(value, "y", true));
    ctx.beginPath();
    ctx.strokeStyle = color;
    ctx.lineWidth = w * px;
    ctx.setLineDash(dash.map((d) => d * px));
    ctx.moveTo(left, y);
    ctx.lineTo(left + width, y);
    ctx.stroke();
  };
  hline(0, colors.zero, 1, []);
  hline(s.line, colors.tolerance, 2, [8, 4]);
  ctx.setLineDash([]);
  ctx.strokeStyle = colors.lift;
  ctx.lineWidth = px;
  ctx.beginPath();
  const cap = 4 * px;
  s.x.forEach((x, i) => {
    const lo = s.lower[i];
    const hi = s.upper[i];
    if (lo == null || hi == null) return;
    const cx = u.valToPos(x, "x", true);
    const y0 = u.valToPos(lo, "y", true);
    const y1 = u.valToPos(hi, "y", true);
    ctx.moveTo(cx, y0);
    ctx.lineTo(cx, y1);
    ctx.moveTo(cx - cap, y0);
    ctx.lineTo(cx + cap, y0);
    ctx.moveTo(cx - cap, y1);
    ctx.lineTo(cx + cap, y1);
  });
  ctx.stroke();
  ctx.restore();
}

export default function LiftCanvas({
  series,
  colors,
}: {
  series: LiftSeries;
  colors: { lift: string; tolerance: string; zero: string };
}) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(320, el.clientWidth || 640),
      height: HEIGHT,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true, range: xRange(series) }, y: { range: yRange(series) } },
      axes: [
        { ...AXIS },
        { ...AXIS, size: 64, label: "Lift", labelSize: 18, values: (_u, vals) => vals.map((v) => `${Number(v.toFixed(2))} %`) },
      ],
      series: [
        {},
        { label: "Lift", stroke: colors.lift, width: 2, points: { show: true, size: 6, fill: colors.lift } },
        { label: "Interval upper", stroke: colors.lift, width: 1, dash: [3, 3], points: { show: false } },
        { label: "Interval lower", stroke: colors.lift, width: 1, dash: [3, 3], points: { show: false } },
      ],
      bands: [{ series: [2, 3], fill: hexAlpha(colors.lift, 0.15) }],
      hooks: { draw: [(u) => overlay(u, series, colors)] },
    };
    const data: uPlot.AlignedData = [
      series.x,
      series.lift,
      series.upper,
      series.lower,
    ];
    const u = new uPlot(opts, data, el);
    plot.current = u;
    const resize =
      typeof ResizeObserver === "undefined"
        ? null
        : new ResizeObserver(() => {
            const w = Math.max(320, el.clientWidth);
            if (w !== u.width) u.setSize({ width: w, height: HEIGHT });
          });
    resize?.observe(el);
    return () => {
      resize?.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [series, colors]);

  return <div ref={host} className="lift-canvas-host" aria-hidden="true" />;
}

function hexAlpha(hex: string, alpha: number): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}
