import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { SessionProvider } from './session';
import { Shell } from './shell';
import { SignIn } from './sign-in';
import { applyTheme } from './theme';
import './styles.css';

applyTheme();
const queries = new QueryClient({
  defaultOptions: {
    // Errors stay on the screen (with the API's detail) rather than retried in silence.
    queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 },
  },
});

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <SessionProvider signedOut={(status) => <SignIn status={status} />}>
        <Shell />
      </SessionProvider>
    </QueryClientProvider>
  </StrictMode>,
);
