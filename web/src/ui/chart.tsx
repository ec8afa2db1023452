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

export function TimeChart({ title, times, series }: { title: string; times: string[]; series: Series[] }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const style = getComputedStyle(document.documentElement);
    const text = style.getPropertyValue('--muted').trim() || '#555';
    const grid = style.getPropertyValue('--border').trim() || '#ddd';
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } };
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: 220,
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2 }))],
        axes: [axis, axis],
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
