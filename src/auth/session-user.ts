/**
 * The signed-in caller, as the session guard puts it on the request and services receive it. Read from the
 * session cache: plan, role and email are as of the last change the database announced (see ChangeFeed);
 * rules that money or access depend on are checked again against the database where they apply.
 */
export interface SessionUser {
  id: string;
  email: string;
  role: 'user' | 'admin';
  planCode: string;
  planName: string;
  createdAt: Date;
  /** The account proved its mailbox (REQUIRE_EMAIL_VERIFICATION gates runs and checkout on it). */
  emailVerified: boolean;
  twoFactorEnabled: boolean;
  /** When this session was signed in (its creation): recent sign-in stands in for a password where there is none. */
  signedInAt: Date;
  /** SHA-256 of the session token the request carried (logout deletes that session). */
  sessionTokenHash: string;
}
