import {
  createCipheriv,
  createDecipheriv,
  hkdfSync,
  randomBytes,
} from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;

/**
 * Encryption at rest of small secrets (TOTP secrets): AES-256-GCM with a random IV per value, the key
 * derived by HKDF-SHA256 from DATA_ENCRYPTION_KEY (or SESSION_SECRET when that is unset) and a purpose
 * label, so one key material yields independent keys. Stored as `v1.<iv>.<tag>.<ciphertext>` (base64url);
 * a value that was tampered with, or encrypted under another key, does not decrypt.
 */
export class SecretCipher {
  private readonly key: Buffer;

  constructor(keyMaterial: string, purpose: string) {
    this.key = Buffer.from(
      hkdfSync(
        'sha256',
        keyMaterial,
        'chat-backend/secret-cipher',
        purpose,
        32,
      ),
    );
  }

  encrypt(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([
      cipher.update(plain, 'utf8'),
      cipher.final(),
    ]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext]
      .map((part) =>
        typeof part === 'string' ? part : part.toString('base64url'),
      )
      .join('.');
  }

  /** The plain value; throws when the value is malformed, altered or under another key. */
  decrypt(stored: string): string {
    const [version, iv, tag, ciphertext] = stored.split('.');
    if (version !== VERSION || !iv || !tag || ciphertext === undefined)
      throw new Error('not an encrypted secret of this version');
    const decipher = createDecipheriv(
      'aes-256-gcm',
      this.key,
      Buffer.from(iv, 'base64url'),
    );
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(ciphertext, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  }
}
