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
    return cronstrue.toString(check.canonical, {
      use24HourTimeFormat: true,
      dayOfWeekStartIndexZero: true,
      throwExceptionOnParseError: true,
    });
  } catch {
    return null;
  }
}
