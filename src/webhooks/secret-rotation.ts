/** What a webhook row holds of a rotation (docs/receiving.md). */
export interface RotatedSecret {
  previousSecretEncrypted: string | null;
  previousSecretExpiresAt: Date | null;
}

/** When the replaced secret stops signing; null when there is none or its grace is over. */
export function previousSecretExpiry(webhook: RotatedSecret, now: Date): Date | null {
  const expiresAt = webhook.previousSecretExpiresAt;
  return webhook.previousSecretEncrypted && expiresAt && expiresAt > now ? expiresAt : null;
}

/** The replaced secret's ciphertext while it still signs, else null. */
export function previousSecretInGrace(webhook: RotatedSecret, now: Date): string | null {
  return previousSecretExpiry(webhook, now) === null ? null : webhook.previousSecretEncrypted;
}
