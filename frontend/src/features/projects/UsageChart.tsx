import { Group, Paper, SegmentedControl, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { QueryState } from '../../components/QueryState';
import { useUsage, type UsageGranularity } from './api/get-usage';
import { TOOLTIP_BOX, TOOLTIP_ITEM } from '../../lib/chart-tooltip';

const SPAN: Record<UsageGranularity, string> = { hour: 'last 24 hours', day: 'last 30 days' };

function label(t: string, granularity: UsageGranularity): string {
  // Buckets are UTC hours or days: label them in UTC so a bar is the bucket the API counted.
  return granularity === 'day' ? t.slice(5, 10) : `${t.slice(11, 16)}Z`;
}

/** What the project's work cost: attempt seconds and attempts per hour or day (project ADMINs). */
export function UsageChart({ slug }: { slug: string }) {
  const [granularity, setGranularity] = useState<UsageGranularity>('hour');
  const usage = useUsage(slug, granularity, true);
  const items = usage.data?.items ?? [];
  const total = (key: 'jobs_created' | 'attempts' | 'attempt_seconds' | 'deliveries') => items.reduce((n, i) => n + i[key], 0);
  return (
    <Paper withBorder p="md">
      <Group justify="space-between" mb="sm">
        <Title order={2} size="h5">
          Usage
        </Title>
        <SegmentedControl
          size="xs"
          aria-label="Usage granularity"
          value={granularity}
          onChange={(v) => setGranularity(v as UsageGranularity)}
          data={[
            { value: 'hour', label: 'By hour' },
            { value: 'day', label: 'By day' },
          ]}
        />
      </Group>
      <QueryState isPending={usage.isPending} error={usage.error}>
        <figure style={{ margin: 0 }} aria-label={`Usage, ${SPAN[granularity]}`}>
          <Text size="sm" c="dimmed" mb={4} data-testid="usage-summary">
            {SPAN[granularity]}: {total('jobs_created')} jobs created, {total('attempts')} attempts, {total('attempt_seconds').toFixed(1)} attempt seconds,{' '}
            {total('deliveries')} deliveries
          </Text>
          <ResponsiveContainer width="100%" height={220}>
            <BarChart data={items.map((i) => ({ ...i, label: label(i.t, granularity) }))}>
              <CartesianGrid strokeDasharray="3 3" opacity={0.3} />
              <XAxis dataKey="label" fontSize={11} minTickGap={20} />
              <YAxis yAxisId="seconds" fontSize={11} width={40} />
              <YAxis yAxisId="count" orientation="right" allowDecimals={false} fontSize={11} width={32} />
              <Tooltip contentStyle={TOOLTIP_BOX} itemStyle={TOOLTIP_ITEM} />
              <Legend />
              <Bar yAxisId="seconds" dataKey="attempt_seconds" fill="#228be6" name="Attempt seconds" isAnimationActive={false} />
              <Bar yAxisId="count" dataKey="attempts" fill="#fab005" name="Attempts" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </figure>
      </QueryState>
    </Paper>
  );
}
