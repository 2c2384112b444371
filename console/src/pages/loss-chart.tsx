import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { LossPoint } from '../loss';

const HEIGHT = 260;

/**
 * The training-loss curve drawn by uPlot, with the same points as a table for screen readers and
 * keyboard users (a canvas says nothing to them).
 */
export function LossChart({ points }: { points: LossPoint[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element || points.length === 0) return;
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: HEIGHT,
        scales: { x: { time: false } },
        axes: [{ label: 'step' }, { label: 'loss' }],
        series: [{ label: 'step' }, { label: 'training loss', stroke: '#1d4ed8', width: 2, points: { show: true, size: 6 } }],
      },
      [points.map((p) => p.step), points.map((p) => p.loss)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points]);
  if (points.length === 0) return <p>No loss reported yet: the curve appears with the first checkpoint or metrics event.</p>;
  const first = points[0];
  const last = points[points.length - 1];
  return (
    <figure class="chart">
      <div
        ref={box}
        class="chart-box"
        role="img"
        data-points={points.length}
        aria-label={`Training loss over ${points.length} points, from ${first.loss} at step ${first.step} to ${last.loss} at step ${last.step}`}
      />
      <details>
        <summary>Loss values</summary>
        <table class="loss-table">
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Training loss</th>
            </tr>
          </thead>
          <tbody>
            {points.map((p) => (
              <tr key={p.step}>
                <td>{p.step}</td>
                <td>{p.loss}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
