import cronstrue from 'cronstrue';
import { checkCron } from './cron-syntax';

/**
 * The English sentence for an expression the pre-check accepts, read seconds-first (cronstrue takes a
 * 6-field string as seconds-first). `null` for anything invalid: we never describe what will be refused.
 */
export function describeCron(expression: string): string | null {
  const check = checkCron(expression);
  if (!check.valid) return null;
  try {
    const english = cronstrue.toString(check.canonical, {
      use24HourTimeFormat: true,
      dayOfWeekStartIndexZero: true,
      throwExceptionOnParseError: true,
    });
    return withOurDayRule(check.canonical, english);
  } catch {
    return null;
  }
}

/**
 * cronstrue joins the day fields with "and" whatever they mean. Ours is Vixie cron's rule (as the
 * backend's cron-descriptor sentence says it): both day fields restricted, either may match ("or
 * on"); a day of month starting with `*` (`*`-stepped, e.g. every fifth day) is unrestricted, so both must match ("only on").
 */
function withOurDayRule(canonical: string, english: string): string {
  const fields = canonical.split(' ');
  const dayOfMonth = fields[3] ?? '*';
  const dayOfWeek = fields[5] ?? '*';
  if (dayOfWeek.startsWith('*')) return english;
  if (!dayOfMonth.startsWith('*')) return english.replace(', and on ', ', or on ');
  return dayOfMonth === '*' ? english : english.replace(', and on ', ', only on ');
}
