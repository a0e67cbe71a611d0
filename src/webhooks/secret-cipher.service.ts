import { Inject, Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';

const VERSION = 'v1';
// Binds ciphertexts to their purpose, so one cannot be replayed as another kind of secret.
const AAD = Buffer.from('meeting-event-bridge:webhook-secret');

/** AES-256-GCM encryption of subscription secrets at rest (SECRETS_ENCRYPTION_KEY). */
@Injectable()
export class SecretCipherService {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = config.secretsEncryptionKey;
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(AAD);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /** Throws if the value was altered or encrypted under another key. */
  decrypt(stored: string): string {
    const [version, iv, tag, body] = stored.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) {
      throw new Error('Unrecognised secret ciphertext format');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'))
      .setAAD(AAD)
      .setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([
      decipher.update(Buffer.from(body, 'base64url')),
      decipher.final(),
    ]).toString('utf8');
  }
}
