/**
 * Decrypted webhook secrets by their ciphertext, so an attempt does not decrypt its webhook's
 * secret again. Keyed by the ciphertext itself: a secret replaced by PATCH has a new one (a
 * fresh IV each time), so nothing here goes stale and nothing needs invalidating. Bounded: past
 * `max` entries the oldest goes.
 */
export class SecretCache {
  private readonly entries = new Map<string, string>();

  constructor(private readonly max = 1000) {}

  get(ciphertext: string, decrypt: (ciphertext: string) => string): string {
    const hit = this.entries.get(ciphertext);
    if (hit !== undefined) return hit;
    const plain = decrypt(ciphertext);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(ciphertext, plain);
    return plain;
  }
}
