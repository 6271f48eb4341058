import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { AppError } from '../../common/errors/app-error';
import { newSecretToken, sha256Hex } from '../../common/hashing';
import { RATE_LIMIT_STORE } from '../../common/rate-limit/rate-limit.module';
import { RateLimitStore } from '../../common/rate-limit/rate-limit.store';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { Metrics } from '../../infra/metrics/metrics';
import { Db } from '../../infra/prisma/prisma.service';
import { ReauthenticationService } from '../reauthentication.service';
import { SessionUser } from '../session-user';
import { SessionsService } from '../sessions.service';
import { hashRecoveryCode, newRecoveryCodes } from './recovery-codes';
import { SecretCipher } from './secret-cipher';
import { newTotpSecret, totpUri, verifyTotp } from './totp';
import { TwoFactorRepository } from './two-factor.repository';

/** How long a sign-in that passed its password may wait for its second factor. */
export const PENDING_SIGN_IN_MS = 5 * 60_000;
/** Wrong codes one pending sign-in may take; then it is void and the password is asked again. */
const MAX_CHALLENGE_FAILURES = 5;

/** A second factor as a request gives it: a current TOTP code or one recovery code. */
export interface SecondFactor {
  code?: string;
  recoveryCode?: string;
}

/** A sign-in waiting for its second factor: the token goes into the pending cookie. */
export interface PendingSignIn {
  token: string;
  expiresAt: Date;
}

/**
 * Two-factor sign-in with TOTP (RFC 6238, otplib). The secret is encrypted at rest; a code is accepted once
 * (its time step must be later than the last accepted); ten recovery codes, stored as HMACs, are each
 * accepted once. Every code check of an account counts against the 'two-factor-user' limit, whichever
 * route it comes through, so codes cannot be guessed faster by spreading the tries.
 * docs/adr/0023-two-factor-sign-in.md
 */
@Injectable()
export class TwoFactorService {
  private readonly cipher: SecretCipher;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RATE_LIMIT_STORE) private readonly limits: RateLimitStore,
    private readonly twoFactor: TwoFactorRepository,
    private readonly reauthentication: ReauthenticationService,
    private readonly sessions: SessionsService,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {
    this.cipher = new SecretCipher(
      config.secrets.dataEncryptionKey ?? config.secrets.session,
      'totp-secret',
    );
  }

  /** A new secret (replacing one not yet confirmed); 2FA is on only once `enable` gets a code of it. */
  async setup(
    user: SessionUser,
  ): Promise<{ secret: string; otpauthUri: string }> {
    const secret = newTotpSecret();
    if (
      !(await this.twoFactor.storePendingSecret(
        user.id,
        this.cipher.encrypt(secret),
      ))
    )
      throw alreadyEnabled();
    return { secret, otpauthUri: totpUri(this.issuer(), user.email, secret) };
  }

  /**
   * A stolen session cookie must not lock the owner out with the thief's authenticator: a session that
   * signed in more than 10 minutes ago confirms with the password (as turning it off does), within the
   * account's code-check limit (RATE_LIMIT_TWO_FACTOR_USER).
   */
  async enable(
    user: SessionUser,
    code: string,
    password?: string | null,
  ): Promise<{ recoveryCodes: string[] }> {
    const state = await this.twoFactor.findState(user.id);
    if (state?.totpEnabledAt) throw alreadyEnabled();
    if (!state?.totpSecret)
      throw new AppError(
        'two_factor_not_set_up',
        'Start with POST /v1/auth/2fa/setup, then send a code of the new secret.',
      );
    // Counted before the password is checked: guesses of either share the account's code-check limit.
    await this.countCodeAttempt(user.id);
    await this.reauthentication.confirmUnlessSignedInRecently(user, password);
    const step = await verifyTotp(
      this.cipher.decrypt(state.totpSecret),
      code,
      null,
      this.clock.now().getTime(),
    );
    if (step === null) throw wrongCode();
    const recoveryCodes = newRecoveryCodes();
    const hashes = recoveryCodes.map((recoveryCode) =>
      hashRecoveryCode(
        this.config.secrets.passwordPepper,
        user.id,
        recoveryCode,
      ),
    );
    if (
      !(await this.twoFactor.enable(
        user.id,
        state.totpSecret,
        step,
        hashes,
        this.clock.now(),
      ))
    ) {
      throw new AppError(
        'two_factor_not_set_up',
        'The secret changed meanwhile (setup was run again): send a code of the newest secret.',
      );
    }
    this.sessions.forgetUser(user.id);
    return { recoveryCodes };
  }

  async disable(
    user: SessionUser,
    password: string | undefined,
    factor: SecondFactor,
  ): Promise<void> {
    await this.reauthentication.confirm(user, password);
    await this.twoFactor.inTransaction(async (db) => {
      const state = await this.twoFactor.findState(user.id, db);
      if (!state?.totpEnabledAt)
        throw new AppError(
          'two_factor_not_enabled',
          'Two-factor sign-in is not on for this account.',
        );
      if (!(await this.checkSecondFactor(db, user.id, state, factor)))
        throw wrongCode();
      await this.twoFactor.disable(db, user.id);
    });
    this.sessions.forgetUser(user.id);
  }

  async status(
    user: SessionUser,
  ): Promise<{ enabled: boolean; recoveryCodesLeft: number }> {
    const state = await this.twoFactor.findState(user.id);
    const enabled = Boolean(state?.totpEnabledAt);
    return {
      enabled,
      recoveryCodesLeft: enabled
        ? await this.twoFactor.countUnusedRecoveryCodes(user.id)
        : 0,
    };
  }

  /** After the first factor (password or provider) of an account with 2FA on. */
  async beginSignIn(userId: string): Promise<PendingSignIn> {
    const { token, hash } = newSecretToken();
    const expiresAt = new Date(this.clock.now().getTime() + PENDING_SIGN_IN_MS);
    await this.twoFactor.createChallenge(userId, hash, expiresAt);
    return { token, expiresAt };
  }

  /**
   * Completes a pending sign-in with its second factor: the account id, once the challenge is spent.
   * A wrong code counts against the challenge (void after five) and the account's limit.
   */
  async completeSignIn(
    pendingToken: string | null,
    factor: SecondFactor,
  ): Promise<string> {
    const now = this.clock.now();
    const outcome = await this.twoFactor.inTransaction(async (db) => {
      const challenge = pendingToken
        ? await this.twoFactor.lockChallenge(db, sha256Hex(pendingToken), now)
        : null;
      if (!challenge) return 'no_challenge' as const;
      const state = await this.twoFactor.findState(challenge.userId, db);
      if (
        state &&
        (await this.checkSecondFactor(db, challenge.userId, state, factor))
      ) {
        await this.twoFactor.deleteChallenge(db, challenge.id);
        return { userId: challenge.userId };
      }
      await this.twoFactor.recordChallengeFailure(
        db,
        challenge.id,
        MAX_CHALLENGE_FAILURES,
      );
      return 'wrong_code' as const;
    });
    if (outcome === 'no_challenge') {
      throw new AppError(
        'two_factor_challenge_invalid',
        'There is no sign-in to complete: it expired or was not started. Sign in again.',
      );
    }
    if (outcome === 'wrong_code') throw wrongCode();
    return outcome.userId;
  }

  /** Checks and spends a TOTP code or a recovery code (exactly one must be given). */
  private async checkSecondFactor(
    db: Db,
    userId: string,
    state: { totpSecret: string | null; totpLastStep: number | null },
    factor: SecondFactor,
  ): Promise<boolean> {
    await this.countCodeAttempt(userId);
    if (factor.recoveryCode !== undefined) {
      return this.twoFactor.useRecoveryCode(
        db,
        userId,
        hashRecoveryCode(
          this.config.secrets.passwordPepper,
          userId,
          factor.recoveryCode,
        ),
        this.clock.now(),
      );
    }
    if (factor.code === undefined || !state.totpSecret) return false;
    const step = await verifyTotp(
      this.cipher.decrypt(state.totpSecret),
      factor.code,
      state.totpLastStep,
      this.clock.now().getTime(),
    );
    return (
      step !== null && (await this.twoFactor.acceptTotpStep(db, userId, step))
    );
  }

  /** One code check of the account against its limit (429 with Retry-After past it). */
  private async countCodeAttempt(userId: string): Promise<void> {
    const limit = this.config.rateLimits['two-factor-user'];
    const { count, resetInMs } = await this.limits.hit(
      `two-factor-user:${userId}`,
      limit.windowSeconds * 1000,
    );
    if (count <= limit.max) return;
    this.metrics.rateLimited('two-factor-user');
    const seconds = Math.max(1, Math.ceil(resetInMs / 1000));
    throw new AppError(
      'rate_limited',
      `Too many codes tried: try again in ${seconds} seconds.`,
      { headers: { 'Retry-After': String(seconds) } },
    );
  }

  /** The name authenticator apps show: the host of APP_URL. */
  private issuer(): string {
    return new URL(this.config.appUrl).hostname;
  }
}

function alreadyEnabled(): AppError {
  return new AppError(
    'two_factor_already_enabled',
    'Two-factor sign-in is already on; turn it off first to enrol another authenticator.',
  );
}

function wrongCode(): AppError {
  return new AppError(
    'invalid_two_factor_code',
    'The code is not correct, or it was used already.',
  );
}
