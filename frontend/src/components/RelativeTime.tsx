import { Tooltip } from '@mantine/core';
import { formatRelative, formatUtc } from '../lib/time';

/** "3 minutes ago", with the exact UTC time on hover (and as the <time> element's datetime). */
export function RelativeTime({ iso, now }: { iso: string | null | undefined; now?: number }) {
  if (!iso) return <span>—</span>;
  return (
    <Tooltip label={formatUtc(iso)} withArrow events={{ hover: true, focus: true, touch: true }}>
      <time dateTime={iso} title={formatUtc(iso)} tabIndex={0}>
        {formatRelative(iso, now)}
      </time>
    </Tooltip>
  );
}
