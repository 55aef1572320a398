import { DeferredTooltip } from './DeferredTooltip';
import { formatCompactRelative, formatExact, formatRelative } from '../lib/time';

/** "3 minutes ago" ("3 min ago" when `compact`, for one-line list rows), with the exact local and
 * UTC time on hover (and as the <time> element's datetime).
 * Not a tab stop: a list of 50 rows would otherwise add 150 stops; the exact time is in `title` for
 * assistive technology and on hover. */
export function RelativeTime({ iso, now, compact = false }: { iso: string | null | undefined; now?: number; compact?: boolean }) {
  if (!iso) return <span>—</span>;
  return (
    <DeferredTooltip label={formatExact(iso)} withArrow events={{ hover: true, focus: false, touch: true }}>
      <time dateTime={iso} title={formatExact(iso)} style={compact ? { whiteSpace: 'nowrap' } : undefined}>
        {compact ? formatCompactRelative(iso, now) : formatRelative(iso, now)}
      </time>
    </DeferredTooltip>
  );
}
