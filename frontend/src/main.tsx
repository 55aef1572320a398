import './boot-mark';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { meQueryOptions } from './api/queries/get-me';
import { App } from './app/App';
import { createQueryClient } from './app/providers';

// Every module of the entry has run (see boot-mark.ts).
performance.mark('cp:modules-evaluated');
const client = createQueryClient();
// Who is signed in decides the first screen, and index.html has asked already (the answer is
// usually in before the scripts are): waiting for it here makes the first render the signed-in
// page (or the login page) instead of a session loader then the page, one whole render less on
// a slow phone (bench/RESULTS.md, issue 23). index.html's static shell stays up meanwhile; a
// failed request is the query's error as before (prefetchQuery never rejects).
void client.prefetchQuery(meQueryOptions()).then(() =>
  createRoot(document.getElementById('root') as HTMLElement).render(
    <StrictMode>
      <App client={client} />
    </StrictMode>,
  ),
);
