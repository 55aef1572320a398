import { Checkbox, Group, Select, TextInput } from '@mantine/core';
import { DAY_NAMES, MONTH_NAMES } from '../../lib/cron-syntax';
import { EVERY_CHOICES, type Pattern } from './patterns';

const DAY_LABELS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTH_LABELS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const pad = (n: number) => String(n).padStart(2, '0');

function TimeField({ hour, minute, onChange }: { hour: number; minute: number; onChange: (h: number, m: number) => void }) {
  return (
    <TextInput
      type="time"
      label="At time"
      w={130}
      value={`${pad(hour)}:${pad(minute)}`}
      onChange={(e) => {
        const m = /^(\d{2}):(\d{2})/.exec(e.currentTarget.value);
        if (m) onChange(Number(m[1]), Number(m[2]));
      }}
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
