import type { QueryClient } from '@tanstack/react-query';
import { BrowserRouter, useRoutes } from 'react-router';
import { Providers } from './providers';
import { routes } from './routes';

function Routes() {
  return useRoutes(routes);
}

// The plain router, not createBrowserRouter: the console has no loaders or actions, and the data
// router was ~14 KB brotli of the first download (routes.tsx has the error boundaries).
export function App({ client }: { client?: QueryClient }) {
  return (
    <Providers client={client}>
      <BrowserRouter>
        <Routes />
      </BrowserRouter>
    </Providers>
  );
}
