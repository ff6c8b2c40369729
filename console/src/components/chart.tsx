/**
 * Bar charts drawn as inline SVG: a chart library would outweigh the whole console. The SVG is one image
 * to assistive technology, its aria-label reading every value; the numbers are also in the page's tables.
 */

/** One bar. */
export interface Bar {
  label: string;
  value: number;
}

const WIDTH = 600;

/** A figure with its caption: columns over time (`series`), or one labelled row per category. */
export function BarChart(props: { caption: string; bars: Bar[]; format(value: number): string; series?: boolean }) {
  const { bars, format } = props;
  const max = Math.max(0, ...bars.map((bar) => bar.value));
  const described = bars.length === 0 ? 'no data' : bars.map((bar) => `${bar.label}: ${format(bar.value)}`).join(', ');
  return (
    <figure class="chart">
      <figcaption>{props.caption}</figcaption>
      {props.series ? (
        <Columns bars={bars} max={max} format={format} label={`${props.caption}: ${described}`} />
      ) : (
        <Rows bars={bars} max={max} format={format} label={`${props.caption}: ${described}`} />
      )}
    </figure>
  );
}

interface DrawProps {
  bars: Bar[];
  max: number;
  label: string;
  format(value: number): string;
}

function Columns({ bars, max, label, format }: DrawProps) {
  const height = 240;
  const plot = height - 30;
  const step = WIDTH / Math.max(bars.length, 1);
  const first = bars[0];
  const last = bars.at(-1);
  return (
    <svg role="img" aria-label={label} viewBox={`0 0 ${WIDTH} ${height}`} preserveAspectRatio="xMidYMid meet">
      <line x1="0" y1={plot} x2={WIDTH} y2={plot} class="axis" />
      {bars.map((bar, i) => {
        const h = max === 0 ? 0 : (bar.value / max) * (plot - 30);
        return (
          <rect key={bar.label} x={i * step + step * 0.15} y={plot - h} width={step * 0.7} height={h} class="bar">
            <title>{`${bar.label}: ${format(bar.value)}`}</title>
          </rect>
        );
      })}
      <text x="0" y="20" class="tick">
        {format(max)}
      </text>
      {first && (
        <text x="0" y={height - 5} class="tick">
          {first.label}
        </text>
      )}
      {last && last !== first && (
        <text x={WIDTH} y={height - 5} class="tick" text-anchor="end">
          {last.label}
        </text>
      )}
    </svg>
  );
}

function Rows({ bars, max, label, format }: DrawProps) {
  const row = 34;
  const height = Math.max(bars.length, 1) * row;
  const labelWidth = 220;
  const valueWidth = 140;
  const span = WIDTH - labelWidth - valueWidth;
  return (
    <svg role="img" aria-label={label} viewBox={`0 0 ${WIDTH} ${height}`} preserveAspectRatio="xMinYMin meet">
      {bars.map((bar, i) => {
        const w = max === 0 ? 0 : (bar.value / max) * span;
        const y = i * row;
        return (
          <g key={bar.label}>
            <text x={labelWidth - 8} y={y + 24} class="tick" text-anchor="end">
              {bar.label.length > 18 ? `${bar.label.slice(0, 17)}…` : bar.label}
            </text>
            <rect x={labelWidth} y={y + 5} width={w} height={row - 10} class="bar" />
            <text x={labelWidth + w + 6} y={y + 24} class="tick">
              {format(bar.value)}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
