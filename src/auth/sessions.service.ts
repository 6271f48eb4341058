import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { newSecretToken, sha256Hex } from '../common/hashing';
import { AppLogger } from '../common/logging/app-logger';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ChangeFeed } from '../infra/database/change-feed';
import { CachedSession, SessionCache } from './session-cache';
import { SessionUser } from './session-user';
import { SessionListDto } from './dto/session.response';
import { isUuid } from '../common/ids';
import { SessionsRepository } from './sessions.repository';

/** last-seen is written at most this often per session, not on every request. */
const TOUCH_INTERVAL_MS = 60_000;
/** Sessions kept in memory per instance; past it the oldest goes (the next request reads it again). */
const MAX_CACHED_SESSIONS = 20_000;
/** Sessions GET /v1/auth/sessions lists at most (the most recently active). */
const MAX_LISTED_SESSIONS = 100;

/**
 * Opaque 256-bit tokens in the cookie; only their SHA-256 is stored. A session and its user are cached
 * per instance: the database announces every change that matters (logout, disable, plan, role, email;
 * see ChangeFeed), which drops the entry on every instance, and while those announcements cannot be heard
 * the cache is not used at all.
 * docs/adr/0016-sessions.md
 */
@Injectable()
export class SessionsService {
  private readonly cache: SessionCache;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sessions: SessionsRepository,
    private readonly clock: Clock,
    private readonly changes: ChangeFeed,
    private readonly log: AppLogger,
  ) {
    this.cache = new SessionCache(
      config.session.cacheTtlMs,
      MAX_CACHED_SESSIONS,
    );
    changes.onChange((change) => {
      if (change.kind === 'user') this.cache.forgetUser(change.userId);
      // Plan names live in cached sessions too.
      else this.cache.clear();
    });
  }

  async start(
    userId: string,
    client: { userAgent?: string; ip?: string },
  ): Promise<{ token: string; expiresAt: Date }> {
    const { token, hash } = newSecretToken();
    const expiresAt = new Date(
      this.clock.now().getTime() + this.config.session.ttlHours * 3_600_000,
    );
    const created = await this.sessions.createSessionUnlessDisabled({
      userId,
      tokenHash: hash,
      expiresAt,
      userAgent: client.userAgent?.slice(0, 512),
      ip: client.ip,
    });
    // Only when an admin disabled the account during this sign-in: the same answer as for a disabled account.
    if (!created)
      throw new AppError(
        'invalid_credentials',
        'The email or password is not correct.',
      );
    return { token, expiresAt };
  }

  /**
   * The caller of a token, or null when the session is unknown, expired, or its user disabled. A session in
   * the cache is answered synchronously (no promise, so the guard lets the request on without a tick).
   */
  authenticate(token: string): SessionUser | Promise<SessionUser | null> {
    const now = this.clock.now();
    const tokenHash = sha256Hex(token);
    const cached = this.changes.live
      ? this.cache.get(tokenHash, now.getTime())
      : undefined;
    if (cached) return this.callerOf(cached, tokenHash, now);
    return this.load(tokenHash, now).then((session) =>
      session ? this.callerOf(session, tokenHash, now) : null,
    );
  }

  private callerOf(
    session: CachedSession,
    tokenHash: string,
    now: Date,
  ): SessionUser {
    if (now.getTime() - session.lastSeenAt.getTime() > TOUCH_INTERVAL_MS)
      this.touch(session, now);
    return { ...session.user, sessionTokenHash: tokenHash };
  }

  async end(user: SessionUser): Promise<void> {
    await this.sessions.deleteSessionByTokenHash(user.sessionTokenHash);
    // The database tells every instance; this one must not wait for that to refuse the next request.
    this.cache.forgetToken(user.sessionTokenHash);
  }

  async list(user: SessionUser): Promise<SessionListDto> {
    const rows = await this.sessions.findLiveSessionsOfUser(
      user.id,
      this.clock.now(),
      MAX_LISTED_SESSIONS,
    );
    return {
      items: rows.map((row) => ({
        id: row.id,
        createdAt: row.createdAt.toISOString(),
        lastSeenAt: row.lastSeenAt.toISOString(),
        expiresAt: row.expiresAt.toISOString(),
        userAgent: row.userAgent,
        ip: row.ip,
        current: row.tokenHash === user.sessionTokenHash,
      })),
    };
  }

  /** Ends one session of the caller's (404 for any other id); true when it was the caller's own. */
  async endOne(user: SessionUser, sessionId: string): Promise<boolean> {
    const ended = isUuid(sessionId)
      ? await this.sessions.deleteSessionOfUser(user.id, sessionId)
      : null;
    if (!ended) throw new AppError('not_found', 'There is no such session.');
    this.cache.forgetToken(ended.tokenHash);
    return ended.tokenHash === user.sessionTokenHash;
  }

  /** Drops what this instance cached of a user whose account was just changed here (the others hear it). */
  forgetUser(userId: string): void {
    this.cache.forgetUser(userId);
  }

  private async load(
    tokenHash: string,
    now: Date,
  ): Promise<CachedSession | null> {
    const generation = this.cache.beginLoad();
    const row = await this.sessions.findLiveSession(tokenHash, now);
    if (!row || row.user.disabledAt) return null;
    const { id, email, role, createdAt, plan, emailVerifiedAt, totpEnabledAt } =
      row.user;
    const session: CachedSession = {
      sessionId: row.id,
      user: {
        id,
        email,
        role,
        planCode: plan.code,
        planName: plan.name,
        createdAt,
        emailVerified: emailVerifiedAt !== null,
        twoFactorEnabled: totpEnabledAt !== null,
        signedInAt: row.createdAt,
      },
      expiresAt: row.expiresAt,
      lastSeenAt: row.lastSeenAt,
    };
    if (this.changes.live)
      this.cache.store(
        tokenHash,
        session,
        generation,
        this.clock.now().getTime(),
      );
    return session;
  }

  /** Not awaited: the request does not wait for last-seen, and the cached copy stops asking for a minute. */
  private touch(session: CachedSession, now: Date): void {
    session.lastSeenAt = now;
    this.sessions
      .touchSession(session.sessionId, now)
      .catch((error: unknown) =>
        this.log.warn({ err: error }, 'could not record session last-seen'),
      );
  }
}
