import { Select } from '@mantine/core';
import { useMemo } from 'react';
import { allTimeZones } from '../../lib/time';

export function TimezoneSelect({ value, onChange }: { value: string; onChange: (zone: string) => void }) {
  const zones = useMemo(() => allTimeZones(), []);
  return (
    <Select
      label="Time zone"
      searchable
      allowDeselect={false}
      limit={100}
      nothingFoundMessage="No such IANA zone"
      data={zones.includes(value) ? zones : [value, ...zones]}
      value={value}
      onChange={(v) => v && onChange(v)}
      w={260}
    />
  );
}
