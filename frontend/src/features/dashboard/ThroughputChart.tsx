import { Text } from '@mantine/core';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { Stats } from '../../api/types';
import { formatMinute } from '../../lib/time';

/** Jobs finished per minute over the last hour, as the API reports them (no client-side invention). */
export function ThroughputChart({ points }: { points: Stats['throughput'] }) {
  const succeeded = points.reduce((n, p) => n + p.succeeded, 0);
  const failed = points.reduce((n, p) => n + p.failed, 0);
  if (points.length === 0 || succeeded + failed === 0) return <Text c="dimmed">No jobs finished in the last hour.</Text>;
  return (
    <figure style={{ margin: 0 }} aria-label={`Throughput, last hour: ${succeeded} succeeded, ${failed} failed`}>
      <Text size="sm" c="dimmed" mb={4}>
        {succeeded} succeeded, {failed} failed (dead) in the last hour
      </Text>
      <ResponsiveContainer width="100%" height={220}>
        <BarChart data={points.map((p) => ({ ...p, label: formatMinute(p.minute) }))}>
          <CartesianGrid strokeDasharray="3 3" opacity={0.3} />
          <XAxis dataKey="label" fontSize={11} minTickGap={20} />
          <YAxis allowDecimals={false} fontSize={11} width={32} />
          <Tooltip />
          <Legend />
          <Bar dataKey="succeeded" stackId="a" fill="#40c057" name="Succeeded" isAnimationActive={false} />
          <Bar dataKey="failed" stackId="a" fill="#fa5252" name="Failed" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}
