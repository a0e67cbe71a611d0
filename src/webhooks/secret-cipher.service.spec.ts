import { loadConfig } from '../config/load-config';
import { SecretCipherService } from './secret-cipher.service';

const cipherWith = (byte: number) =>
  new SecretCipherService(
    loadConfig({ SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, byte).toString('base64') }),
  );

describe('SecretCipherService', () => {
  it('round-trips and never stores the plaintext', () => {
    const cipher = cipherWith(1);
    const stored = cipher.encrypt('my-signing-secret-1234');
    expect(stored).not.toContain('my-signing-secret-1234');
    expect(cipher.decrypt(stored)).toBe('my-signing-secret-1234');
  });

  it('uses a fresh IV each time', () => {
    const cipher = cipherWith(1);
    expect(cipher.encrypt('same')).not.toBe(cipher.encrypt('same'));
  });

  it('refuses a tampered ciphertext and another key', () => {
    const stored = cipherWith(1).encrypt('my-signing-secret-1234');
    const parts = stored.split('.');
    const body = Buffer.from(parts[3], 'base64url');
    body[0] ^= 1;
    parts[3] = body.toString('base64url');
    expect(() => cipherWith(1).decrypt(parts.join('.'))).toThrow();
    expect(() => cipherWith(2).decrypt(stored)).toThrow();
  });
});
