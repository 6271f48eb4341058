import { SessionUser } from './session-user';

/** A live session with what requests need of its user, as last read from the database. */
export interface CachedSession {
  sessionId: string;
  user: Omit<SessionUser, 'sessionTokenHash'>;
  expiresAt: Date;
  lastSeenAt: Date;
}

interface Entry {
  session: CachedSession;
  storedAtMs: number;
}

/**
 * Sessions by token hash, so an authenticated request costs no database round trip. Entries are dropped
 * when the database says their user or session changed (see ChangeFeed), and live at most `ttlMs` anyway.
 * A load that overlapped any drop is not stored: it may have read the row before the change committed.
 * Bounded: past `maxEntries` the oldest entry goes.
 */
export class SessionCache {
  private readonly entries = new Map<string, Entry>();
  private readonly tokensOfUser = new Map<string, Set<string>>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /** The cached session, if stored less than `ttlMs` ago and not expired. */
  get(tokenHash: string, nowMs: number): CachedSession | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (
      nowMs - entry.storedAtMs >= this.ttlMs ||
      entry.session.expiresAt.getTime() <= nowMs
    ) {
      this.remove(tokenHash);
      return undefined;
    }
    return entry.session;
  }

  /** Taken before reading the database; `store` refuses the result if anything was dropped since. */
  beginLoad(): number {
    return this.generation;
  }

  store(
    tokenHash: string,
    session: CachedSession,
    loadedAt: number,
    nowMs: number,
  ): void {
    if (loadedAt !== this.generation || this.ttlMs <= 0) return;
    this.remove(tokenHash);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.remove(oldest);
    }
    this.entries.set(tokenHash, { session, storedAtMs: nowMs });
    let tokens = this.tokensOfUser.get(session.user.id);
    if (!tokens) {
      tokens = new Set();
      this.tokensOfUser.set(session.user.id, tokens);
    }
    tokens.add(tokenHash);
  }

  /** The session changed (logout): drop it, and keep loads already under way from storing it again. */
  forgetToken(tokenHash: string): void {
    this.generation += 1;
    this.remove(tokenHash);
  }

  forgetUser(userId: string): void {
    this.generation += 1;
    for (const tokenHash of this.tokensOfUser.get(userId) ?? [])
      this.entries.delete(tokenHash);
    this.tokensOfUser.delete(userId);
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
    this.tokensOfUser.clear();
  }

  private remove(tokenHash: string): void {
    const entry = this.entries.get(tokenHash);
    if (!entry) return;
    this.entries.delete(tokenHash);
    const tokens = this.tokensOfUser.get(entry.session.user.id);
    tokens?.delete(tokenHash);
    if (tokens?.size === 0) this.tokensOfUser.delete(entry.session.user.id);
  }
}
