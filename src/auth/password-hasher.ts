import { createHmac } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import bcrypt from 'bcrypt';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';

export const BCRYPT_COST = 12;

/**
 * bcrypt (cost 12) over base64(HMAC-SHA256(pepper, password)). bcrypt ignores every byte after the 72nd;
 * the HMAC first turns any password into 44 characters, so long passwords that share a prefix differ,
 * and a stolen database without the pepper cannot be attacked offline.
 * docs/adr/0017-passwords-and-sign-in.md
 */
@Injectable()
export class PasswordHasher {
  /** Compared against when the email is unknown, so both failures cost one bcrypt comparison. */
  private readonly dummyHash: Promise<string>;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.dummyHash = bcrypt.hash(
      this.prehash('dummy password for unknown accounts'),
      BCRYPT_COST,
    );
  }

  hash(password: string): Promise<string> {
    return bcrypt.hash(this.prehash(password), BCRYPT_COST);
  }

  async verify(password: string, hash: string | null): Promise<boolean> {
    if (hash === null) {
      await bcrypt.compare(this.prehash(password), await this.dummyHash);
      return false;
    }
    return bcrypt.compare(this.prehash(password), hash);
  }

  private prehash(password: string): string {
    return createHmac('sha256', this.config.secrets.passwordPepper)
      .update(password, 'utf8')
      .digest('base64');
  }
}
