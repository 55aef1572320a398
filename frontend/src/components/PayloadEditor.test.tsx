import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, http, renderScreen } from '../test/render';
import { JsonBlock } from './JsonBlock';
import { PayloadEditor } from './PayloadEditor';

afterEach(() => vi.unstubAllGlobals());

function Editor({ initial }: { initial: string }) {
  const [text, setText] = useState(initial);
  return (
    <>
      <PayloadEditor value={text} onChange={setText} errors={[]} />
      <output aria-label="text">{text}</output>
    </>
  );
}

describe('secret references', () => {
  it('the payload editor offers the known secret names and inserts a reference, never a value', async () => {
    const fake = fakeApi(http.get('/api/v1/secrets', ({ response }) => response(200).json({ names: ['API_TOKEN', 'DB_PASSWORD'] })));
    vi.stubGlobal('fetch', fake.fetch);
    renderScreen(<Editor initial="" />, { role: 'OPERATOR' });
    await userEvent.click(await screen.findByRole('button', { name: 'Insert secret DB_PASSWORD' }));
    expect(screen.getByLabelText('text').textContent).toBe('{"$secret":"DB_PASSWORD"}');
    await waitFor(() => expect(screen.getByLabelText('secret DB_PASSWORD')).toBeTruthy());
    expect(screen.getByRole('button', { name: 'Insert secret API_TOKEN' })).toBeTruthy();
  });

  it('shows a reference in a payload as a chip', () => {
    renderScreen(<JsonBlock value={{ url: 'https://x.example', headers: { Authorization: { $secret: 'API_TOKEN' } } }} label="Payload" />);
    expect(screen.getByLabelText('secret API_TOKEN').textContent).toContain('API_TOKEN');
    expect(screen.queryByLabelText(/secret \$secret/)).toBeNull();
  });

  it('a lookalike object with more keys is not a reference', () => {
    renderScreen(<JsonBlock value={{ a: { $secret: 'X', other: 1 } }} label="Payload" />);
    expect(screen.queryByLabelText('secret X')).toBeNull();
  });
});
