import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { captureInvitationFromUrl } from './invitation';

// Opened from an invitation mail: its token is kept through a sign-in or sign-up first.
captureInvitationFromUrl();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
