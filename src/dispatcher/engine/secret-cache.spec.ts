import { SecretCache } from './secret-cache';

describe('SecretCache', () => {
  it('decrypts each ciphertext once', () => {
    const cache = new SecretCache();
    const decrypt = jest.fn((c: string) => `plain:${c}`);
    expect(cache.get('a', decrypt)).toBe('plain:a');
    expect(cache.get('a', decrypt)).toBe('plain:a');
    expect(cache.get('b', decrypt)).toBe('plain:b');
    expect(decrypt.mock.calls).toEqual([['a'], ['b']]);
  });

  it('forgets the oldest entry past its bound', () => {
    const cache = new SecretCache(2);
    const decrypt = jest.fn((c: string) => c.toUpperCase());
    for (const c of ['a', 'b', 'c', 'a']) cache.get(c, decrypt);
    expect(decrypt.mock.calls.map(([c]) => c)).toEqual(['a', 'b', 'c', 'a']);
  });

  it('caches nothing when decryption fails', () => {
    const cache = new SecretCache();
    const failing = () => {
      throw new Error('bad key');
    };
    expect(() => cache.get('a', failing)).toThrow('bad key');
    expect(cache.get('a', () => 'ok')).toBe('ok');
  });
});
