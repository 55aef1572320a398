import { render, screen } from '@testing-library/react';
import { useAfterFirstPaint } from './after-first-paint';

function Probe() {
  const painted = useAfterFirstPaint();
  return <p>{painted ? 'second' : 'first'}</p>;
}

describe('useAfterFirstPaint', () => {
  it('is false for the first render and true once a frame has passed', async () => {
    render(<Probe />);
    expect(screen.getByText('first')).toBeInTheDocument();
    expect(await screen.findByText('second')).toBeInTheDocument();
  });

  it('does not wait for a frame in a hidden tab, which paints none', async () => {
    const visibility = vi.spyOn(document, 'visibilityState', 'get').mockReturnValue('hidden');
    const frame = vi.spyOn(window, 'requestAnimationFrame');
    try {
      render(<Probe />);
      expect(await screen.findByText('second')).toBeInTheDocument();
      expect(frame).not.toHaveBeenCalled();
    } finally {
      visibility.mockRestore();
      frame.mockRestore();
    }
  });
});
