// @vitest-environment node
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeCron } from './cron-english';
import { checkCron } from './cron-syntax';

// Shared with the backend's tests: the one definition of the supported cron subset.
const FIXTURE = resolve(__dirname, '../../../fixtures/cron/cases.json');

interface Case {
  expression: string;
  valid: boolean;
  canonical: string | null;
  field: number | null;
  english: string | null;
  note: string;
}

const cases: Case[] = existsSync(FIXTURE) ? (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { cases: Case[] }).cases : [];

describe('shared cron fixture', () => {
  it('exists and has cases', () => {
    expect(cases.length, `${FIXTURE} is missing or empty`).toBeGreaterThan(0);
  });

  it.each(cases.map((c) => [c.note, c] as const))('pre-check agrees: %s', (_note, c) => {
    const check = checkCron(c.expression);
    expect(check.valid, `validity of ${JSON.stringify(c.expression)}`).toBe(c.valid);
    if (check.valid) {
      expect(check.canonical, 'canonical form').toBe(c.canonical);
    } else if (!c.valid) {
      expect(check.field, `field blamed for ${JSON.stringify(c.expression)} (${check.message})`).toBe(c.field);
    }
  });

  it.each(cases.filter((c) => c.valid).map((c) => [c.expression, c] as const))('English for %j', (_e, c) => {
    const english = describeCron(c.expression);
    expect(english, 'cronstrue reads every valid case').toBeTruthy();
    // A case added later may not have its English yet; it is then only required to be readable.
    if (c.english !== null) expect(english).toBe(c.english);
  });
});
