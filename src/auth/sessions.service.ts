import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppError } from '../common/errors/app-error';
import { sha256Hex } from '../common/hashing';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { SessionUser } from './session-user';
import { SessionsRepository } from './sessions.repository';

/** last-seen is written at most this often per session, not on every request. */
const TOUCH_INTERVAL_MS = 60_000;

/** Opaque 256-bit tokens in the cookie; only their SHA-256 is stored. */
@Injectable()
export class SessionsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sessions: SessionsRepository,
    private readonly clock: Clock,
  ) {}

  async start(userId: string, client: { userAgent?: string; ip?: string }): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.clock.now().getTime() + this.config.session.ttlHours * 3_600_000);
    const created = await this.sessions.createSessionUnlessDisabled({ userId, tokenHash: sha256Hex(token), expiresAt, userAgent: client.userAgent?.slice(0, 512), ip: client.ip });
    // Only when an admin disabled the account during this sign-in: the same answer as for a disabled account.
    if (!created) throw new AppError('invalid_credentials', 'The email or password is not correct.');
    return { token, expiresAt };
  }

  /** The caller of a token, or null when the session is unknown, expired, or its user disabled. */
  async authenticate(token: string): Promise<SessionUser | null> {
    const now = this.clock.now();
    const tokenHash = sha256Hex(token);
    const session = await this.sessions.findLiveSession(tokenHash, now);
    if (!session || session.user.disabledAt) return null;
    if (now.getTime() - session.lastSeenAt.getTime() > TOUCH_INTERVAL_MS) await this.sessions.touchSession(session.id, now);
    const { id, email, role, planCode } = session.user;
    return { id, email, role, planCode, sessionTokenHash: tokenHash };
  }

  end(user: SessionUser): Promise<void> {
    return this.sessions.deleteSessionByTokenHash(user.sessionTokenHash);
  }
}
