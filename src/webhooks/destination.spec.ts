import { BrokerConfig } from '../config/config.types';
import { brokerHeaderProblem } from './broker-headers';
import { brokerProblem, destinationRule } from './destination';

const BROKERS: BrokerConfig[] = [
  { name: 'bus', type: 'rabbitmq', url: 'amqp://u:p@h', namespace: 'client', prefix: 'meb.' },
  { name: 'stream', type: 'nats', url: 'nats://h', namespace: 'client', prefix: '' },
  { name: 'own', type: 'rabbitmq', url: 'amqp://u:p@h2', namespace: 'shared', prefix: 'meb.' },
];

describe('destination', () => {
  it.each([
    [{ type: 'http' }, null],
    [{ type: 'rabbitmq', broker: 'bus', exchange: '', routing_key: 'q' }, null],
    [{ type: 'nats', broker: 'stream', subject: 'a.b.c' }, null],
    [{ type: 'nats', broker: 'stream', subject: 'a.$b.c_INBOX' }, null],
    [null, 'destination must be an object'],
    [{ type: 'sqs' }, 'destination.type'],
    [{ type: 'http', url: 'x' }, 'destination.url is not a field'],
    [{ type: 'rabbitmq', exchange: 'x', routing_key: 'k' }, 'destination.broker'],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'a b', routing_key: 'k' },
      'destination.exchange',
    ],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'a\u0000b', routing_key: 'k' },
      'destination.exchange',
    ],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'a\ud800', routing_key: 'k' },
      'destination.exchange',
    ],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'x'.repeat(256), routing_key: 'k' },
      'destination.exchange',
    ],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'amq.topic', routing_key: 'k' },
      'destination.exchange must not begin with "amq."',
    ],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'x', routing_key: 'é' },
      'destination.routing_key',
    ],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'x', routing_key: 'a\u0000' },
      'destination.routing_key',
    ],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'x', routing_key: '\udc00' },
      'destination.routing_key',
    ],
    [{ type: 'nats', broker: 'stream', subject: 'a.>' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a.*.b' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a.b*' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a..b' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: '.a' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a.' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a b' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a\tb' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a.\u0000' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a.\ud800' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a.\u00a0' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a'.repeat(256) }, 'destination.subject'],
    [
      { type: 'nats', broker: 'stream', subject: '$JS.API.STREAM.PURGE.ALPHA' },
      'must not begin with "$" or "_INBOX"',
    ],
    [{ type: 'nats', broker: 'stream', subject: '$KV.b.k' }, 'must not begin with "$"'],
    [{ type: 'nats', broker: 'stream', subject: '$SYS.REQ.SERVER.PING' }, 'must not begin'],
    [{ type: 'nats', broker: 'stream', subject: '_INBOX.abc' }, 'must not begin'],
  ])('%j → %s', (value, problem) => {
    const message = destinationRule(value, 'destination');
    if (problem === null) expect(message).toBeNull();
    else expect(message).toContain(problem);
  });

  it('names destination.broker for an unknown broker or one of another type, listing none and never a URL', () => {
    expect(brokerProblem({ type: 'http' }, BROKERS, 'alpha')).toBeNull();
    const unknown = brokerProblem(
      { type: 'rabbitmq', broker: 'nope', exchange: 'meb.alpha.x', routing_key: 'k' },
      BROKERS,
      'alpha',
    );
    expect(unknown).toEqual({
      field: 'destination.broker',
      message: 'destination.broker "nope" is not a rabbitmq broker of this service',
    });
    const other = brokerProblem({ type: 'nats', broker: 'bus', subject: 'a' }, BROKERS, 'alpha');
    expect(other?.message).toBe('destination.broker "bus" is a rabbitmq broker, not nats');
    expect(JSON.stringify([unknown, other])).not.toMatch(/u:p|stream|own|amqp:/);
  });

  describe('the client part of a broker', () => {
    const rabbit = (exchange: string, broker = 'bus') =>
      brokerProblem({ type: 'rabbitmq', broker, exchange, routing_key: 'k' }, BROKERS, 'alpha');
    const nats = (subject: string) =>
      brokerProblem({ type: 'nats', broker: 'stream', subject }, BROKERS, 'alpha');

    it('RabbitMQ: only exchanges beginning <prefix><client_id>. (others forbidden: 403)', () => {
      expect(rabbit('meb.alpha.events')).toBeNull();
      for (const outside of ['', 'meb.beta.events', 'meb.alphabet.x', 'meb.alpha.', 'events']) {
        expect(rabbit(outside)).toEqual({
          field: 'destination.exchange',
          forbidden: true,
          message: expect.stringContaining('must begin with "meb.alpha."'),
        });
      }
    });

    it('NATS: only subjects beginning <prefix><client_id>. (an empty prefix too)', () => {
      expect(nats('alpha.meetings')).toBeNull();
      expect(nats('beta.meetings')?.field).toBe('destination.subject');
      expect(nats('alphabet.meetings')?.field).toBe('destination.subject');
    });

    it('a shared broker: anywhere the name rules allow, the default exchange included', () => {
      expect(rabbit('', 'own')).toBeNull();
      expect(rabbit('meb.beta.events', 'own')).toBeNull();
    });
  });

  describe('headers a broker acts on', () => {
    it.each([
      ['rabbitmq', 'CC', 'RabbitMQ routes the message by this header'],
      ['rabbitmq', 'cc', 'routes'],
      ['rabbitmq', 'Bcc', 'routes'],
      ['rabbitmq', 'x-death', 'dead-lettering'],
      ['rabbitmq', 'X-First-Death-Queue', 'dead-lettering'],
      ['nats', 'Nats-Rollup', 'Nats-*'],
      ['nats', 'nats-msg-id', 'Nats-*'],
      ['nats', 'Nats-Expected-Last-Sequence', 'Nats-*'],
    ] as const)('%s refuses %s, naming headers.<name>', (type, name, why) => {
      const problem = brokerHeaderProblem(type, ['Authorization', name]);
      expect(problem?.field).toBe(`headers.${name}`);
      expect(problem?.message).toContain(why);
    });

    it('leaves the others, and every header of an http destination', () => {
      expect(brokerHeaderProblem('rabbitmq', ['X-Tenant', 'Authorization', 'Nats-Rollup'])).toBe(
        null,
      );
      expect(brokerHeaderProblem('nats', ['CC', 'X-Tenant'])).toBeNull();
      expect(brokerHeaderProblem('http', ['CC', 'Nats-Rollup'])).toBeNull();
    });
  });
});
