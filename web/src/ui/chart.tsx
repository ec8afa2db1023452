// A time-series chart on uPlot (about 50 KB), imported only by the screens that draw one.
// The numbers are also given as a table for screen readers and keyboard users.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

const AXIS_GAP = 18; // the tick and the space between it and its label, in CSS pixels

function labelWidth(self: uPlot, values: string[] | null, axisIdx: number): number {
  if (!values || values.length === 0) return 50;
  const ctx = self.ctx;
  ctx.save();
  ctx.font = self.axes[axisIdx]?.font?.[0] ?? ctx.font;
  const widest = Math.max(...values.map((v) => ctx.measureText(v).width));
  ctx.restore();
  return Math.ceil(widest / uPlot.pxRatio) + AXIS_GAP;
}

export function TimeChart({ title, times, series }: { title: string; times: string[]; series: Series[] }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const style = getComputedStyle(document.documentElement);
    const text = style.getPropertyValue('--muted').trim() || '#555';
    const grid = style.getPropertyValue('--border').trim() || '#ddd';
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    // The value axis as wide as its widest label (uPlot's fixed 50 px clips "120,000").
    const valueAxis = { ...axis, size: labelWidth };
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: 220,
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2 }))],
        axes: [axis, valueAxis],
        // Room on the right for the last time label, which is centred on its tick.
        padding: [12, 28, 0, 0],
        legend: { show: true },
      },
      [times.map((t) => Date.parse(t) / 1000), ...series.map((s) => s.values)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(320, el.clientWidth), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series]);
  return (
    <figure className="chart">
      <div ref={ref} role="img" aria-label={`${title}: chart; the same figures are in the table below`} />
      <figcaption className="visually-hidden">{title}</figcaption>
    </figure>
  );
}
