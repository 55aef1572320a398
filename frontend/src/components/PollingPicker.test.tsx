import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderScreen } from '../test/render';
import { PollingPicker } from './PollingPicker';

describe('polling picker', () => {
  it('says when it last updated in the 24 h format the exact times use, not the locale 12 h one', () => {
    const at = new Date('2026-12-02T15:07:34Z').getTime();
    renderScreen(<PollingPicker choice={5000} onChange={() => undefined} visible failing={false} updatedAt={at} />);
    expect(screen.getByText(/^Updated /).textContent).toMatch(/^Updated \d\d:07:34$/);
  });
});
