/** A tiny line of the last samples (oldest first), scaled to its own maximum; the label says the
 * current value in words, so the chart is decoration for sighted users, not the only source. */
export function Sparkline({ values, label, color = 'var(--mantine-color-blue-6)' }: { values: number[]; label: string; color?: string }) {
  const width = 96;
  const height = 24;
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`).join(' ');
  return (
    <svg width={width} height={height} role="img" aria-label={label} data-samples={values.length}>
      {values.length > 1 ? (
        <polyline points={points} fill="none" stroke={color} strokeWidth={1.5} />
      ) : (
        <line x1={0} x2={width} y1={height - 2} y2={height - 2} stroke={color} strokeWidth={1} strokeDasharray="2 2" />
      )}
    </svg>
  );
}
