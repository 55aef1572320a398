import './boot-mark';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';

// Every module of the entry has run (see boot-mark.ts).
performance.mark('cp:modules-evaluated');
createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
