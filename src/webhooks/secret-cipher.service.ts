import { Inject, Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';

const VERSION = 'v1';

/** What a ciphertext holds; it is bound to it, so one cannot be replayed as another kind. */
export type CipherPurpose =
  | 'webhook-secret'
  | 'recording-download-token'
  | 'webhook-headers'
  // An installed account's access and refresh tokens, and an install's PKCE verifier (docs/accounts.md).
  | 'platform-token'
  | 'pkce-verifier'
  | 'webhook-url';
const aad = (purpose: CipherPurpose) => Buffer.from(`meeting-event-bridge:${purpose}`);

/**
 * AES-256-GCM encryption at rest (SECRETS_ENCRYPTION_KEY) of subscription secrets and of the
 * platform's recording download tokens.
 */
@Injectable()
export class SecretCipherService {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = config.secretsEncryptionKey;
  }

  encrypt(plaintext: string, purpose: CipherPurpose = 'webhook-secret'): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(aad(purpose));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /** Throws if the value was altered or encrypted under another key. */
  decrypt(stored: string, purpose: CipherPurpose = 'webhook-secret'): string {
    const [version, iv, tag, body] = stored.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) {
      throw new Error('Unrecognised secret ciphertext format');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'))
      .setAAD(aad(purpose))
      .setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(body, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  }
}
