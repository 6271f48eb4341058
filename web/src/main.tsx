// First: the remembered colour theme is applied before anything is drawn (theme.ts says why here).
import './theme';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { captureInvitationFromUrl } from './invitation';
import { createQueryClient } from './queries';

// Opened from an invitation mail: its token is kept through a sign-in or sign-up first.
captureInvitationFromUrl();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={createQueryClient()}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
