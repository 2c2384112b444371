import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const HEIGHT = 280;

/** Colours told apart on white (and by the legend's names for those who cannot tell them apart). */
export const SERIES_COLOURS = ['#1d4ed8', '#b91c1c', '#047857', '#7c3aed', '#b45309', '#0e7490', '#be185d', '#4d7c0f'];

const DAY = 86_400;
const DAY_TICKS = [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY];
const utcDay = (seconds: number) => new Date(seconds * 1000).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

export interface TimeSeries {
  label: string;
  values: number[];
}

/**
 * Values over time (one line per series) drawn by uPlot. The canvas says nothing to a screen reader:
 * `summary` does, and the page shows the same numbers in a table.
 */
export function TimeChart({ times, series, unit, summary }: { times: number[]; series: TimeSeries[]; unit: string; summary: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element || times.length === 0 || series.length === 0) return;
    const width = () => Math.max(280, element.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: HEIGHT,
        // Ticks placed in UTC, where the buckets start, whatever the browser's time zone.
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        // Buckets are UTC days: ticks fall on whole days and name them as UTC dates.
        axes: [
          { incrs: DAY_TICKS, values: (_u, ticks) => ticks.map(utcDay) },
          { label: unit, size: 70 },
        ],
        series: [
          { label: 'day' },
          ...series.map((s, i) => ({ label: s.label, stroke: SERIES_COLOURS[i % SERIES_COLOURS.length], width: 2, points: { show: true, size: 6 } })),
        ],
      },
      [times, ...series.map((s) => s.values)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, unit]);
  return <div ref={box} class="chart-box" role="img" aria-label={summary} data-series={series.length} />;
}
