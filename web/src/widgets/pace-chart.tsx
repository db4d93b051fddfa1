// The dial rate against the pace set, drawn by uPlot, loaded on demand. The numbers are also in
// the text beside it; the chart adds their recent history.
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

export interface PaceSample {
  /** Unix seconds. */
  atS: number;
  dialRate: number;
  pace: number;
  inFlight: number;
}

export function PaceChart({ samples }: { samples: PaceSample[] }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const data: uPlot.AlignedData = [
    samples.map((s) => s.atS),
    samples.map((s) => s.dialRate),
    samples.map((s) => s.pace),
  ];

  useEffect(() => {
    let gone = false;
    const container = box.current;
    if (!container) return;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([{ default: UPlot }]) => {
      if (gone) return;
      chart.current = new UPlot(
        {
          width: Math.min(container.clientWidth || 600, 720),
          height: 160,
          series: [
            {},
            { label: 'dial rate / s', stroke: '#1f5fbf', width: 2 },
            { label: 'pace set / s', stroke: '#888', dash: [6, 4] },
          ],
          axes: [{}, { label: 'calls / s' }],
          scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.2)] } },
        },
        data,
        container,
      );
    });
    return () => {
      gone = true;
      chart.current?.destroy();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    chart.current?.setData(data);
  });

  return <div class="chart" ref={box} role="img" aria-label="Dial rate against the pace set, over time" />;
}
