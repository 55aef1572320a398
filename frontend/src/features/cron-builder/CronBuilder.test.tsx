import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { aCronDescription, aProblem } from '../../test/factories';
import { fill, fakeApi, http, renderScreen } from '../../test/render';
import { CronBuilder } from './CronBuilder';
import { markDstChanges, NextRuns } from './NextRuns';

// Weekdays at 09:30 Berlin across the 2027 spring-forward (28 March): the offset changes between runs 3 and 4.
const berlinRuns = ['2027-03-25T08:30:00Z', '2027-03-26T08:30:00Z', '2027-03-29T07:30:00Z', '2027-03-30T07:30:00Z', '2027-03-31T07:30:00Z'];

function Harness({ initial = '0 0 9 * * *', zone = 'Europe/Berlin' }: { initial?: string; zone?: string }) {
  const [value, setValue] = useState({ expression: initial, timezone: zone });
  return (
    <>
      <CronBuilder expression={value.expression} timezone={value.timezone} onChange={setValue} />
      <output aria-label="form value">{`${value.expression}|${value.timezone}`}</output>
    </>
  );
}

function describeApi() {
  return fakeApi(
    http.post('/api/v1/cron/describe', async ({ request, response }) => {
      const body = await request.json();
      return response(200).json(aCronDescription({ expression: body.expression.trim(), next_runs: berlinRuns }));
    }),
  );
}

const expressionBox = () => screen.getByRole('textbox', { name: /Cron expression/ });
const repeat = () => screen.getByRole('combobox', { name: 'Repeat' });

async function choose(label: string, option: string) {
  await userEvent.click(screen.getByRole('combobox', { name: label }));
  await userEvent.click(await screen.findByRole('option', { name: option }));
}

afterEach(() => vi.unstubAllGlobals());

describe('CronBuilder', () => {
  it('builds "weekdays at 09:30" from the dropdowns, with English and five next runs in both zones', async () => {
    const fake = describeApi();
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<Harness />);
    await choose('Repeat', 'Weekly on chosen days');
    fireEvent.change(screen.getByLabelText('At time'), { target: { value: '09:30' } });
    expect(expressionBox()).toHaveValue('0 30 9 * * MON-FRI');
    expect(screen.getByLabelText('form value')).toHaveTextContent('0 30 9 * * MON-FRI|Europe/Berlin');
    expect(screen.getByTestId('cron-english')).toHaveTextContent('At 09:30, Monday through Friday');
    const table = await screen.findByRole('table', { name: 'Next runs' });
    expect(within(table).getAllByRole('row')).toHaveLength(6);
    expect(within(table).getByText(/In Europe\/Berlin/)).toBeInTheDocument();
    expect(within(table).getByText(/In your zone/)).toBeInTheDocument();
    expect(within(table).getAllByText('DST change')).toHaveLength(1);
    await waitFor(async () => {
      const sent = fake.calls.filter((c) => c.url.endsWith('/cron/describe'));
      expect(await sent.at(-1)?.clone().json()).toEqual({ expression: '0 30 9 * * MON-FRI', timezone: 'Europe/Berlin', count: 5 });
    });
  });

  it('shows one time column when the viewer is in the schedule\'s zone', () => {
    renderScreen(<NextRuns runs={['2026-12-03T08:00:00Z']} timeZone="Europe/Berlin" viewerZone="Europe/Berlin" />);
    const table = screen.getByRole('table', { name: 'Next runs' });
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['#', 'In Europe/Berlin (your zone too)', 'DST']);
    expect(within(table).getAllByRole('cell')).toHaveLength(3);
  });

  it('unticking a weekday rewrites the expression', async () => {
    vi.stubGlobal('fetch', describeApi().fetch);
    renderScreen(<Harness initial="0 30 9 * * MON-FRI" />);
    expect(repeat()).toHaveValue('Weekly on chosen days');
    await userEvent.click(screen.getByRole('checkbox', { name: 'Wed' }));
    expect(expressionBox()).toHaveValue('0 30 9 * * MON,TUE,THU,FRI');
  });

  it('typing an expression sets the dropdowns it expresses, or Custom', async () => {
    vi.stubGlobal('fetch', describeApi().fetch);
    renderScreen(<Harness />);
    expect(repeat()).toHaveValue('Daily at a time');
    await userEvent.clear(expressionBox());
    await fill(expressionBox(), '0 0 18 L * *');
    expect(repeat()).toHaveValue('Monthly on a day');
    expect(screen.getByRole('combobox', { name: 'Day of month' })).toHaveValue('Last day');
    expect(screen.getByLabelText('At time')).toHaveValue('18:00');
    await userEvent.clear(expressionBox());
    await fill(expressionBox(), '0 0 9-17 * * *');
    expect(repeat()).toHaveValue('Custom');
    expect(screen.getByTestId('cron-english')).toHaveTextContent('Every hour, between 09:00 and 17:00');
  });

  it.each([
    ['Every N seconds', '*/30 * * * * *'],
    ['Every N minutes', '0 */5 * * * *'],
    ['Every N hours', '0 0 * * * *'],
    ['Daily at a time', '0 0 9 * * *'],
    ['Weekly on chosen days', '0 0 9 * * MON-FRI'],
    ['Monthly on a day', '0 0 9 1 * *'],
    ['Yearly on a date', '0 0 9 1 JAN *'],
  ])('choosing %s writes %s and keeps that pattern selected', async (label, expression) => {
    vi.stubGlobal('fetch', describeApi().fetch);
    renderScreen(<Harness initial="0 0 9-17 * * *" />);
    await choose('Repeat', label);
    expect(expressionBox()).toHaveValue(expression);
    expect(repeat()).toHaveValue(label);
  });

  it('says what is wrong and where, before asking the server', async () => {
    const fake = describeApi();
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<Harness />);
    await userEvent.clear(expressionBox());
    await fill(expressionBox(), '0 0 25 * * *');
    expect(screen.getByText('field 3 (hour): 25 is out of range 0–23')).toBeInTheDocument();
    expect(repeat()).toHaveValue('Custom');
  });

  it("shows the server's 422 detail when only the backend knows it is wrong", async () => {
    vi.stubGlobal('fetch', fakeApi(
      http.post('/api/v1/cron/describe', ({ response }) => response(422).json(aProblem(422, 'expression never fires in 2027'))),
    ).fetch);
    renderScreen(<Harness />);
    expect((await screen.findAllByText('expression never fires in 2027')).length).toBeGreaterThan(0);
  });

  it('changing the zone reaches the form value', async () => {
    vi.stubGlobal('fetch', describeApi().fetch);
    renderScreen(<Harness zone="UTC" />);
    // Typed into, not cleared first: the box empties when it takes focus (it used to keep "UTC",
    // so the search became "UTCTokyo").
    await fill(screen.getByRole('combobox', { name: 'Time zone' }), 'Tokyo');
    await userEvent.click(await screen.findByRole('option', { name: 'Asia/Tokyo' }));
    await waitFor(() => expect(screen.getByLabelText('form value')).toHaveTextContent('|Asia/Tokyo'));
  });

  it('leaving the zone box without choosing keeps the zone it had', async () => {
    vi.stubGlobal('fetch', describeApi().fetch);
    renderScreen(<Harness zone="Europe/Berlin" />);
    const zone = screen.getByRole('combobox', { name: 'Time zone' });
    await userEvent.click(zone);
    expect(zone).toHaveValue('');
    expect(zone).toHaveAttribute('placeholder', 'Europe/Berlin');
    await userEvent.tab();
    expect(zone).toHaveValue('Europe/Berlin');
    expect(screen.getByLabelText('form value')).toHaveTextContent('|Europe/Berlin');
  });

  it('takes the time 24-hour and marks a 12-hour one', async () => {
    vi.stubGlobal('fetch', describeApi().fetch);
    renderScreen(<Harness initial="0 0 9 * * *" zone="UTC" />);
    const at = screen.getByLabelText('At time');
    expect(at).toHaveValue('09:00');
    await userEvent.clear(at);
    await fill(at, '21:45');
    await waitFor(() => expect(expressionBox()).toHaveValue('0 45 21 * * *'));
    await userEvent.clear(at);
    await fill(at, '9:45 PM');
    await userEvent.tab();
    expect(screen.getByText('HH:MM, 24-hour (00:00–23:59)')).toBeInTheDocument();
    expect(expressionBox()).toHaveValue('0 45 21 * * *');
  });
});

describe('CronBuilder freshness', () => {
  it('labels the runs of the previous expression as updating while the new ones load', async () => {
    let release: () => void = () => {};
    const slow = new Promise<void>((r) => (release = r));
    vi.stubGlobal('fetch', fakeApi(
      http.post('/api/v1/cron/describe', async ({ request, response }) => {
        const body = await request.json();
        if (body.expression !== '0 0 9 * * *') await slow;
        return response(200).json(aCronDescription({ expression: body.expression, next_runs: berlinRuns }));
      }),
    ).fetch);
    renderScreen(<Harness />);
    expect(await screen.findByText('Next 5 runs')).toBeInTheDocument();
    await choose('Repeat', 'Every N seconds');
    expect(await screen.findByText(/Next 5 runs \(updating…\)/)).toBeInTheDocument();
    // Past the debounce the request is still in flight: the old runs must still say so.
    await new Promise((r) => setTimeout(r, 600));
    expect(screen.getByText(/Next 5 runs \(updating…\)/)).toBeInTheDocument();
    release();
    await waitFor(() => expect(screen.getByText('Next 5 runs')).toBeInTheDocument());
  });
});

describe('DST markers', () => {
  it('marks a run whose UTC offset differs from the run before', () => {
    const rows = markDstChanges(berlinRuns, 'Europe/Berlin', '2027-03-24T00:00:00Z');
    expect(rows.map((r) => r.dstChange)).toEqual([false, false, true, false, false]);
    expect(rows[2]?.offset).toBe('GMT+02:00');
  });

  it('marks nothing in a zone without DST', () => {
    expect(markDstChanges(berlinRuns, 'UTC', '2027-03-24T00:00:00Z').some((r) => r.dstChange)).toBe(false);
  });
});
