/** How much of a limit is used, as a native <meter> (role meter) named by what it measures. */
export function Meter(props: { label: string; value: number; max: number }) {
  const max = Math.max(props.max, 1);
  return <meter aria-label={props.label} min={0} max={max} low={max * 0.75} high={max * 0.9} optimum={0} value={Math.min(props.value, max)} />;
}
