import { Group, Loader, Paper, Select, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useEffect, useState } from 'react';
import { errorMessage } from '../../api/problem';
import type { CronFieldProps } from '../../components/cron-field';
import { describeCron } from '../../lib/cron-english';
import { checkCron } from '../../lib/cron-syntax';
import { viewerTimeZone } from '../../lib/time';
import { useDescribeCron } from './api/describe-cron';
import { NextRuns } from './NextRuns';
import { PatternControls } from './PatternControls';
import { defaultPattern, expressionOf, PATTERN_LABELS, patternOf, type PatternKind } from './patterns';
import { TimezoneSelect } from './TimezoneSelect';

/**
 * Dropdown patterns ↔ raw 6-field expression, both live, with the English sentence and the next five
 * runs (from the backend, debounced) in the schedule's zone and the viewer's.
 */
export function CronBuilder({ expression, timezone, onChange, error }: CronFieldProps) {
  // The raw field keeps exactly what the user types; the dropdowns follow whenever it parses.
  const [text, setText] = useState(expression);
  const [forceCustom, setForceCustom] = useState(false);
  useEffect(() => {
    // Only an outside change (e.g. the edit form loading a schedule) differs from what we last sent.
    setText((current) => (current === expression ? current : expression));
  }, [expression]);

  const check = checkCron(text);
  const pattern = forceCustom ? { kind: 'custom' as const } : patternOf(text);
  const english = describeCron(text);
  const [debounced] = useDebouncedValue({ text: check.valid ? check.canonical : '', timezone }, 300);
  const described = useDescribeCron(debounced.text, debounced.timezone, debounced.text !== '');
  // Runs for an older expression (debounce pending, or its request in flight) are dimmed and labelled,
  // never shown as the runs of what is on screen now.
  const stale =
    check.valid && (debounced.text !== check.canonical || debounced.timezone !== timezone || described.isPlaceholderData);

  const setExpression = (next: string) => {
    setText(next);
    onChange({ expression: next, timezone });
  };

  return (
    <Stack gap="sm">
      <Group align="flex-end" wrap="wrap">
        <Select
          label="Repeat"
          w={220}
          allowDeselect={false}
          value={pattern.kind}
          data={(Object.keys(PATTERN_LABELS) as PatternKind[]).map((k) => ({ value: k, label: PATTERN_LABELS[k] }))}
          onChange={(v) => {
            if (!v) return;
            if (v === 'custom') {
              setForceCustom(true);
              return;
            }
            setForceCustom(false);
            setExpression(expressionOf(defaultPattern(v as PatternKind)) ?? text);
          }}
        />
        <PatternControls
          pattern={pattern}
          onChange={(p) => {
            setForceCustom(false);
            const next = expressionOf(p);
            if (next) setExpression(next);
          }}
        />
      </Group>
      <Group align="flex-start" wrap="wrap">
        <TextInput
          label="Cron expression (6 fields, seconds first)"
          description="second minute hour day-of-month month day-of-week"
          w={360}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          value={text}
          onChange={(e) => {
            setForceCustom(false);
            setExpression(e.currentTarget.value);
          }}
          error={!check.valid ? check.message : (described.error && !stale ? errorMessage(described.error) : error) || undefined}
          spellCheck={false}
          autoComplete="off"
        />
        <TimezoneSelect value={timezone} onChange={(tz) => onChange({ expression: text, timezone: tz })} />
      </Group>
      <Paper withBorder p="sm" aria-live="polite">
        <Stack gap="xs">
          <Text fw={500} data-testid="cron-english">
            {english ?? '—'}
          </Text>
          {check.valid && described.data && described.data.expression !== text.trim() && !stale && (
            <Text size="xs" c="dimmed">
              Normalised by the server: <code>{described.data.expression}</code>
            </Text>
          )}
          {check.valid && (described.isFetching || stale) && !described.data && <Loader size="xs" role="status" aria-label="Computing next runs" />}
          {check.valid && described.data && !described.isError && (
            <div style={{ opacity: stale ? 0.5 : 1 }}>
              <Text size="sm" fw={500} mb={4}>
                Next {described.data.next_runs.length} runs {stale && '(updating…)'}
              </Text>
              <NextRuns runs={described.data.next_runs} timeZone={debounced.timezone} viewerZone={viewerTimeZone()} />
            </div>
          )}
        </Stack>
      </Paper>
    </Stack>
  );
}
