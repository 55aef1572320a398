import { Text } from '@mantine/core';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { Stats, StatsWindows } from '../../api/types';
import { formatMinute } from '../../lib/time';
import { TOOLTIP_BOX, TOOLTIP_ITEM } from '../../lib/chart-tooltip';

type Point = { label: string; succeeded: number; failed: number };

function Bars({ points, caption, span }: { points: Point[]; caption: string; span: string }) {
  const succeeded = points.reduce((n, p) => n + p.succeeded, 0);
  const failed = points.reduce((n, p) => n + p.failed, 0);
  if (points.length === 0 || succeeded + failed === 0) return <Text c="dimmed">No jobs finished in {span}.</Text>;
  return (
    <figure style={{ margin: 0 }} aria-label={`Throughput, ${span}: ${succeeded} succeeded, ${failed} failed`}>
      <Text size="sm" c="dimmed" mb={4}>
        {succeeded} succeeded, {failed} failed (dead) {caption}
      </Text>
      <ResponsiveContainer width="100%" height={220}>
        <BarChart data={points}>
          <CartesianGrid strokeDasharray="3 3" opacity={0.3} />
          <XAxis dataKey="label" fontSize={11} minTickGap={20} />
          <YAxis allowDecimals={false} fontSize={11} width={40} />
          <Tooltip contentStyle={TOOLTIP_BOX} itemStyle={TOOLTIP_ITEM} />
          <Legend />
          <Bar dataKey="succeeded" stackId="a" fill="#40c057" name="Succeeded" isAnimationActive={false} />
          <Bar dataKey="failed" stackId="a" fill="#fa5252" name="Failed" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}

/** Jobs finished per minute over the last hour, as the API reports them (no client-side invention). */
export function ThroughputChart({ points }: { points: Stats['throughput'] }) {
  return <Bars span="the last hour" caption="in the last hour" points={points.map((p) => ({ label: formatMinute(p.minute), succeeded: p.succeeded, failed: p.failed }))} />;
}

/** The operator's jobs finished per clock hour over 24 hours (GET /stats/windows; deliveries apart, in the caption). */
export function HourlyThroughputChart({ points }: { points: StatsWindows['throughput'] }) {
  const deliveries = points.reduce((n, p) => n + p.deliveries_dead, 0);
  const caption = `in 24 hours${deliveries ? `; ${deliveries} notification deliveries died besides` : ''}`;
  return <Bars span="24 hours" caption={caption} points={points.map((p) => ({ label: formatMinute(p.hour), succeeded: p.succeeded, failed: p.dead }))} />;
}
