import { HttpStatus } from '@nestjs/common';
import { TestContext, newTestService } from '../../test/fakes/new-test-service';
import { ApiError } from '../common/api-error';
import { WebhooksService } from './webhooks.service';

const OWNER = 'client-a';
const OTHER = 'client-b';
// A public address literal: the URL policy passes it without a DNS lookup.
const create = {
  url: 'https://1.1.1.1/hook',
  events: ['job.started' as const],
  secret: 's3cret-value',
};

/** The ApiError a call rejects with, to assert its status and details. */
async function apiErrorOf(call: Promise<unknown>): Promise<ApiError> {
  const error: unknown = await call.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

describe('WebhooksService', () => {
  let t: TestContext<WebhooksService>;

  beforeEach(async () => {
    t = await newTestService(WebhooksService);
  });

  it('stores the secret sealed, with only its last 4 characters in the clear', async () => {
    const webhook = await t.sut.create(OWNER, create);

    const stored = t.tables.webhooks.get(webhook.id)!;
    expect(stored).toMatchObject({ ownerClientId: OWNER, active: true, secretHint: 'alue' });
    expect(stored.secretEncrypted).not.toContain(create.secret);
    expect(t.cipher.decrypt(stored.secretEncrypted)).toBe(create.secret);
  });

  it('keeps a secret with control characters whole; its hint shows them as U+FFFD', async () => {
    const secret = 'control-chars-\u0007-end\u0000';
    const webhook = await t.sut.create(OWNER, { ...create, secret });

    const stored = t.tables.webhooks.get(webhook.id)!;
    expect(stored.secretHint).toBe('end\uFFFD');
    expect(t.cipher.decrypt(stored.secretEncrypted)).toBe(secret);
  });

  it('refuses a private URL, naming the field, and stores nothing', async () => {
    const error = await apiErrorOf(
      t.sut.create(OWNER, { ...create, url: 'http://127.0.0.1/hook' }),
    );

    expect(error.getStatus()).toBe(HttpStatus.BAD_REQUEST);
    expect(error.extra.details?.map((d) => d.field)).toEqual(['url']);
    expect(t.tables.webhooks.size).toBe(0);
  });

  describe("another client's webhook", () => {
    it('is not found, and is neither changed nor deleted', async () => {
      const theirs = await t.sut.create(OTHER, create);

      for (const call of [
        t.sut.findOwned(OWNER, theirs.id),
        t.sut.update(OWNER, theirs.id, { active: false }),
        t.sut.remove(OWNER, theirs.id),
      ]) {
        expect((await apiErrorOf(call)).getStatus()).toBe(HttpStatus.NOT_FOUND);
      }
      expect(t.tables.webhooks.get(theirs.id)).toMatchObject({ active: true });
      expect((await t.sut.list(OWNER, {})).data).toEqual([]);
    });
  });

  it('refuses an update that sets nothing, naming the body', async () => {
    const webhook = await t.sut.create(OWNER, create);

    const error = await apiErrorOf(t.sut.update(OWNER, webhook.id, {}));

    expect(error.getStatus()).toBe(HttpStatus.BAD_REQUEST);
    expect(error.extra.details?.map((d) => d.field)).toEqual(['body']);
  });

  it('changes nothing when the new URL is refused', async () => {
    const webhook = await t.sut.create(OWNER, create);

    const error = await apiErrorOf(
      t.sut.update(OWNER, webhook.id, { url: 'http://10.0.0.1/hook', active: false }),
    );

    expect(error.getStatus()).toBe(HttpStatus.BAD_REQUEST);
    expect(t.tables.webhooks.get(webhook.id)).toMatchObject({ url: create.url, active: true });
  });

  it('pages the caller’s webhooks newest first', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await t.sut.create(OWNER, create)).id);

    const first = await t.sut.list(OWNER, { limit: 2 });
    const second = await t.sut.list(OWNER, { limit: 2, cursor: first.next_cursor! });

    expect([...first.data, ...second.data].map((w) => w.id)).toEqual(ids.reverse());
    expect(second.next_cursor).toBeNull();
  });

  describe('secret rotation (docs/receiving.md)', () => {
    const GRACE_SECONDS = 86400;
    const sealed = (id: string) => t.tables.webhooks.get(id)!;
    const opened = (ciphertext: string | null) =>
      ciphertext === null ? null : t.cipher.decrypt(ciphertext);

    it('keeps the replaced secret signing for WEBHOOK_SECRET_GRACE_SECONDS, sealed', async () => {
      const webhook = await t.sut.create(OWNER, create);
      const before = Date.now();

      const updated = await t.sut.update(OWNER, webhook.id, { secret: 'second-secret-0001' });

      expect(opened(sealed(webhook.id).secretEncrypted)).toBe('second-secret-0001');
      expect(sealed(webhook.id).previousSecretEncrypted).not.toContain(create.secret);
      expect(opened(sealed(webhook.id).previousSecretEncrypted)).toBe(create.secret);
      const expiresAt = updated.previousSecretExpiresAt!.getTime();
      expect(expiresAt).toBeGreaterThanOrEqual(before + GRACE_SECONDS * 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + GRACE_SECONDS * 1000);
      expect(updated.secretHint).toBe('0001');
    });

    it('keeps only the secret a second change replaced', async () => {
      const webhook = await t.sut.create(OWNER, create);
      await t.sut.update(OWNER, webhook.id, { secret: 'second-secret-0001' });

      await t.sut.update(OWNER, webhook.id, { secret: 'third-secret-00002' });

      expect(opened(sealed(webhook.id).secretEncrypted)).toBe('third-secret-00002');
      expect(opened(sealed(webhook.id).previousSecretEncrypted)).toBe('second-secret-0001');
    });

    it('changes nothing when the secret sent is the current one', async () => {
      const webhook = await t.sut.create(OWNER, create);
      await t.sut.update(OWNER, webhook.id, { secret: 'second-secret-0001' });
      const before = { ...sealed(webhook.id) };

      await t.sut.update(OWNER, webhook.id, { secret: 'second-secret-0001' });

      expect(sealed(webhook.id)).toMatchObject({
        secretEncrypted: before.secretEncrypted,
        previousSecretEncrypted: before.previousSecretEncrypted,
        previousSecretExpiresAt: before.previousSecretExpiresAt,
      });
    });

    it('leaves a rotation alone when other fields change', async () => {
      const webhook = await t.sut.create(OWNER, create);
      const rotated = await t.sut.update(OWNER, webhook.id, { secret: 'second-secret-0001' });

      const paused = await t.sut.update(OWNER, webhook.id, { active: false });

      expect(paused.previousSecretEncrypted).toBe(rotated.previousSecretEncrypted);
      expect(paused.previousSecretExpiresAt).toEqual(rotated.previousSecretExpiresAt);
    });

    it('replaces at once with WEBHOOK_SECRET_GRACE_SECONDS=0', async () => {
      t = await newTestService(WebhooksService, { WEBHOOK_SECRET_GRACE_SECONDS: '0' });
      const webhook = await t.sut.create(OWNER, create);

      await t.sut.update(OWNER, webhook.id, { secret: 'second-secret-0001' });

      expect(sealed(webhook.id)).toMatchObject({
        previousSecretEncrypted: null,
        previousSecretExpiresAt: null,
      });
    });

    it('gives no grace to a current secret that no longer decrypts', async () => {
      const webhook = t.tables.addWebhook({ ownerClientId: OWNER, secretEncrypted: 'v1.x.y.z' });

      await t.sut.update(OWNER, webhook.id, { secret: 'second-secret-0001' });

      expect(opened(sealed(webhook.id).secretEncrypted)).toBe('second-secret-0001');
      expect(sealed(webhook.id).previousSecretEncrypted).toBeNull();
    });
  });
});
