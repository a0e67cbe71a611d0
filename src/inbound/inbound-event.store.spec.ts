import type { Repository } from 'typeorm';
import { InboundEventEntity } from './inbound-event.entity';
import {
  InboundEventStore,
  NewInboundEvent,
  UnserialisableEventError,
  isDataException,
} from './inbound-event.store';

const event = (identityKey: string, payload: Record<string, unknown>): NewInboundEvent => ({
  event: 'meeting.started',
  identityKey,
  eventTs: 1,
  accountId: null,
  payload,
});

describe('InboundEventStore.insert', () => {
  it('fails only the event that cannot be serialised, never the batch beside it', async () => {
    // Stands in for PostgreSQL: answers the batched INSERT with one id per row it was given.
    const statements: unknown[][] = [];
    const repo = {
      query: (_sql: string, params: unknown[][]) => {
        statements.push(params);
        return Promise.resolve(
          params[1].map((key) => ({ id: `id-${String(key)}`, identity_key: key })),
        );
      },
    } as unknown as Repository<InboundEventEntity>;
    const store = new InboundEventStore(repo);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const deep: unknown = JSON.parse('['.repeat(200_000) + ']'.repeat(200_000));

    const results = await Promise.allSettled([
      store.insert(event('a', { n: 1 })),
      store.insert(event('deep', { deep })),
      store.insert(event('b', { n: 2 })),
      store.insert(event('circular', circular)),
      store.insert(event('big', { n: 1n })),
    ]);

    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'rejected',
    ]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'id-a' });
    expect(results[2]).toEqual({ status: 'fulfilled', value: 'id-b' });
    for (const bad of [results[1], results[3], results[4]]) {
      const reason = (bad as PromiseRejectedResult).reason as unknown;
      expect(reason).toBeInstanceOf(UnserialisableEventError);
      // The caller's 400 (InboundService answers data exceptions so), not a 503.
      expect(isDataException(reason)).toBe(true);
    }
    // The good rows still shared one statement, with the payloads as serialised by their callers.
    expect(statements).toHaveLength(1);
    expect(statements[0][1]).toEqual(['a', 'b']);
    expect(statements[0][4]).toEqual(['{"n":1}', '{"n":2}']);
  });
});
