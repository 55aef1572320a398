import { Select } from '@mantine/core';
import { useMemo, useState } from 'react';
import { allTimeZones } from '../../lib/time';

/** A searchable IANA zone. The search box empties when it takes focus (the chosen zone stays as
 * the placeholder, and comes back on blur): the search is the box's text, so typing after the
 * chosen "UTC" searched for "UTCAmerica/New_York" and found nothing (review 2026-12-05 §4.5). */
export function TimezoneSelect({ value, onChange }: { value: string; onChange: (zone: string) => void }) {
  const zones = useMemo(() => allTimeZones(), []);
  const [search, setSearch] = useState(value);
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
      searchValue={search}
      onSearchChange={setSearch}
      onFocus={() => setSearch('')}
      placeholder={value}
      w={260}
    />
  );
}
