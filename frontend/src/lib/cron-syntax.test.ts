import { checkCron } from './cron-syntax';

describe('Quartz tokens', () => {
  it.each([
    ['0 0 9 ? * MON-FRI', 4, "'?' is not supported; use '*'"],
    ['0 0 9 * * ?', 6, "'?' is not supported; use '*'"],
    ['0 0 9 1W * *', 4, "'W' (nearest weekday) is not supported"],
    ['0 0 9 LW * *', 4, "'L' is only supported alone in day of month"],
    ['0 0 9 * * MON#2', 6, "'#' (nth weekday of the month) is not supported"],
  ])('%s is named "not supported", never "not a number"', (expression, field, message) => {
    const check = checkCron(expression);
    expect(check.valid).toBe(false);
    if (check.valid) return;
    expect(check.field).toBe(field);
    expect(check.message).toContain(message);
    expect(check.message).not.toContain('not a number');
  });

  it('weekday names with W or L stay names', () => {
    expect(checkCron('0 0 9 * * WED').valid).toBe(true);
    expect(checkCron('0 0 9 * JUL *').valid).toBe(true);
  });
});
