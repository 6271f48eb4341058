/** The signed-in caller, as the session guard puts it on the request and services receive it. */
export interface SessionUser {
  id: string;
  email: string;
  role: 'user' | 'admin';
  planCode: string;
  /** SHA-256 of the session token the request carried (logout deletes that session). */
  sessionTokenHash: string;
}
