import { BrokerLink } from './broker-link';
import { Deadline } from '../transport';

interface FakeConnection {
  id: number;
  drop: () => void;
}

/** A dial that fails while `down` is set and otherwise hands out numbered connections. */
function fakeBroker() {
  const broker = { down: false, dials: 0, dropped: 0, connections: [] as FakeConnection[] };
  const link = new BrokerLink<FakeConnection>(
    {
      name: 'bus',
      type: 'rabbitmq',
      url: 'amqp://user:s3cret@broker.test:5672',
      namespace: 'client',
      prefix: 'meb.',
    },
    'RabbitMQ',
    (drop) => {
      broker.dials++;
      if (broker.down) {
        return Promise.reject(
          new Error('connect ECONNREFUSED amqp://user:s3cret@broker.test:5672'),
        );
      }
      const connection = { id: broker.dials, drop };
      broker.connections.push(connection);
      return Promise.resolve(connection);
    },
    () => broker.dropped++,
  );
  return { broker, link };
}

describe('BrokerLink', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('opens one connection however many ask for it at once', async () => {
    const { broker, link } = fakeBroker();
    expect(link.status()).toEqual({ type: 'rabbitmq', state: 'not connected yet' });
    const [a, b] = await Promise.all([link.connect(), link.connect()]);
    expect(a).toBe(b);
    expect(broker.dials).toBe(1);
    expect(link.status()).toEqual({ type: 'rabbitmq', state: 'connected' });
  });

  it('a failed dial: reconnecting, the error without address or credentials, and a new dial after the wait', async () => {
    const { broker, link } = fakeBroker();
    broker.down = true;
    await expect(link.connect()).rejects.toThrow('<broker url>');
    const status = link.status();
    expect(status).toEqual({
      type: 'rabbitmq',
      state: 'reconnecting',
      error: 'connection refused',
    });
    expect(broker.dials).toBe(1);

    broker.down = false;
    await jest.runOnlyPendingTimersAsync();
    expect(broker.dials).toBe(2);
    expect(link.status()).toEqual({ type: 'rabbitmq', state: 'connected' });
  });

  it('a dropped connection is forgotten with what goes with it, then opened again', async () => {
    const { broker, link } = fakeBroker();
    const first = await link.connect();
    first.drop();
    expect(broker.dropped).toBe(1);
    expect(link.status().state).toBe('reconnecting');
    // A stale connection's drop changes nothing once another is open.
    await jest.runOnlyPendingTimersAsync();
    const second = await link.connect();
    expect(second.id).toBe(2);
    first.drop();
    expect(broker.dropped).toBe(1);
    expect(link.status().state).toBe('connected');
  });

  it('an attempt without a connection fails naming the broker and why, never where it is, or its deadline', async () => {
    const { link } = fakeBroker();
    const live = new Deadline(60_000);
    expect(link.unreachable(new Error('connect ECONNREFUSED 127.0.0.1:5699'), live)).toMatchObject({
      ok: false,
      error: 'RabbitMQ broker "bus" unreachable (connection refused)',
    });
    expect(link.unreachable(new Error('getaddrinfo ENOTFOUND broker.test'), live).error).toBe(
      'RabbitMQ broker "bus" unreachable (host name not resolved)',
    );
    expect(
      link.unreachable(new Error('odd failure at amqp://user:s3cret@broker.test:5672'), live).error,
    ).toBe('RabbitMQ broker "bus" unreachable');
    const late = new Deadline(1000, Date.now() - 1);
    expect(link.unreachable(new Error('x'), late)).toMatchObject({
      ok: false,
      error: 'timed out connecting to RabbitMQ broker "bus"',
    });
  });

  it("hides a broker's address in what a client may read", () => {
    const { link } = fakeBroker();
    expect(
      link.hide(
        'closed by broker.test at 10.1.2.3:5672, [fe80::1]:5672, amqp://user:s3cret@broker.test:5672',
      ),
    ).toBe('closed by <broker> at <broker>, <broker>, <broker url>');
  });

  it('after close: the connection is shut and nothing reconnects', async () => {
    const { broker, link } = fakeBroker();
    const connection = await link.connect();
    const shut: number[] = [];
    await link.close((c) => Promise.resolve(shut.push(c.id)));
    expect(shut).toEqual([1]);
    connection.drop();
    await jest.runOnlyPendingTimersAsync();
    expect(broker.dials).toBe(1);
  });
});
