import { returnPath } from './return-path';

/**
 * The token of an invitation link (/invitations/accept?token=…), kept for this tab while the person signs
 * in, signs up or verifies their address first: each of those then lands back on the invitation.
 */
const KEY = 'chat.pendingInvitation';
export const INVITATION_PATH = '/invitations/accept';

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/** Keeps the token of the link the page was opened with, when it is an invitation link. */
export function captureInvitationFromUrl(): void {
  if (window.location.pathname !== INVITATION_PATH) return;
  const token = new URLSearchParams(window.location.search).get('token');
  if (token) storage()?.setItem(KEY, token);
}

export function pendingInvitation(): string | null {
  return storage()?.getItem(KEY) ?? null;
}

export function forgetInvitation(): void {
  storage()?.removeItem(KEY);
}

/**
 * Where a sign-in, sign-up or verification continues: the waiting invitation, else the page the person
 * was on when asked to sign in (a shared conversation, return-path.ts), else the chat.
 */
export function landingPath(): string {
  return pendingInvitation() ? INVITATION_PATH : (returnPath() ?? '/');
}
