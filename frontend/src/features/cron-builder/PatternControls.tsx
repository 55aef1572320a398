import { Checkbox, Group, Select, TextInput } from '@mantine/core';
import { useEffect, useState } from 'react';
import { DAY_NAMES, MONTH_NAMES } from '../../lib/cron-syntax';
import { EVERY_CHOICES, type Pattern } from './patterns';

const DAY_LABELS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTH_LABELS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const pad = (n: number) => String(n).padStart(2, '0');

const CLOCK = /^([01]?\d|2[0-3]):([0-5]\d)$/;

/** The time of day, typed 24-hour ("21:30") like the sentence and the tables beside it: not
 * `<input type="time">`, which Chromium draws as "09:30 PM" in an en-US browser (review
 * 2026-12-05 §5.14). A fire is at second 0, as the patterns write it. */
function TimeField({ hour, minute, onChange }: { hour: number; minute: number; onChange: (h: number, m: number) => void }) {
  const shown = `${pad(hour)}:${pad(minute)}`;
  const [text, setText] = useState(shown);
  const [invalid, setInvalid] = useState(false);
  // The expression moved the pattern (typed in the expression box): show its time.
  useEffect(() => {
    setText(shown);
    setInvalid(false);
  }, [shown]);
  return (
    <TextInput
      label="At time"
      w={130}
      inputMode="numeric"
      autoComplete="off"
      placeholder="HH:MM"
      value={text}
      error={invalid ? 'HH:MM, 24-hour (00:00–23:59)' : undefined}
      onChange={(e) => {
        const typed = e.currentTarget.value;
        setText(typed);
        const m = CLOCK.exec(typed.trim());
        if (m) {
          setInvalid(false);
          onChange(Number(m[1]), Number(m[2]));
        }
      }}
      onBlur={() => setInvalid(!CLOCK.test(text.trim()))}
    />
  );
}

/** The controls of one pattern; every change hands back the whole new pattern. */
export function PatternControls({ pattern, onChange }: { pattern: Pattern; onChange: (p: Pattern) => void }) {
  switch (pattern.kind) {
    case 'seconds':
    case 'minutes':
    case 'hours': {
      const unit = pattern.kind;
      return (
        <Select
          label={`Every how many ${unit}`}
          w={200}
          allowDeselect={false}
          value={String(pattern.every)}
          data={EVERY_CHOICES[unit].map((n) => ({ value: String(n), label: n === 1 ? `every ${unit.slice(0, -1)}` : `every ${n} ${unit}` }))}
          onChange={(v) => v && onChange({ kind: unit, every: Number(v) })}
        />
      );
    }
    case 'daily':
      return <TimeField hour={pattern.hour} minute={pattern.minute} onChange={(hour, minute) => onChange({ ...pattern, hour, minute })} />;
    case 'weekly':
      return (
        <Group align="flex-end">
          <Checkbox.Group
            label="On days"
            value={pattern.days.map(String)}
            onChange={(v) => v.length > 0 && onChange({ ...pattern, days: v.map(Number).sort((a, b) => a - b) })}
          >
            <Group gap="xs" mt={6}>
              {DAY_NAMES.map((name, i) => (
                <Checkbox key={name} value={String(i)} label={DAY_LABELS[i]} />
              ))}
            </Group>
          </Checkbox.Group>
          <TimeField hour={pattern.hour} minute={pattern.minute} onChange={(hour, minute) => onChange({ ...pattern, hour, minute })} />
        </Group>
      );
    case 'monthly':
      return (
        <Group align="flex-end">
          <Select
            label="Day of month"
            w={160}
            allowDeselect={false}
            value={String(pattern.day)}
            data={[...Array.from({ length: 31 }, (_, i) => ({ value: String(i + 1), label: String(i + 1) })), { value: 'L', label: 'Last day' }]}
            onChange={(v) => v && onChange({ ...pattern, day: v === 'L' ? 'L' : Number(v) })}
          />
          <TimeField hour={pattern.hour} minute={pattern.minute} onChange={(hour, minute) => onChange({ ...pattern, hour, minute })} />
        </Group>
      );
    case 'yearly': {
      const maxDay = MONTH_DAYS[pattern.month - 1] ?? 31;
      return (
        <Group align="flex-end">
          <Select
            label="Month"
            w={160}
            allowDeselect={false}
            value={String(pattern.month)}
            data={MONTH_NAMES.map((_, i) => ({ value: String(i + 1), label: MONTH_LABELS[i] ?? '' }))}
            onChange={(v) => v && onChange({ ...pattern, month: Number(v), day: Math.min(pattern.day, MONTH_DAYS[Number(v) - 1] ?? 31) })}
          />
          <Select
            label="Day"
            w={100}
            allowDeselect={false}
            value={String(pattern.day)}
            data={Array.from({ length: maxDay }, (_, i) => String(i + 1))}
            onChange={(v) => v && onChange({ ...pattern, day: Number(v) })}
          />
          <TimeField hour={pattern.hour} minute={pattern.minute} onChange={(hour, minute) => onChange({ ...pattern, hour, minute })} />
        </Group>
      );
    }
    case 'custom':
      return null;
  }
}
