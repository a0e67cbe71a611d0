import { BrokerConfig } from '../config/config.types';
import { brokerProblem, destinationRule } from './destination';

const BROKERS: BrokerConfig[] = [
  { name: 'bus', type: 'rabbitmq', url: 'amqp://u:p@h' },
  { name: 'stream', type: 'nats', url: 'nats://h' },
];

describe('destination', () => {
  it.each([
    [{ type: 'http' }, null],
    [{ type: 'rabbitmq', broker: 'bus', exchange: '', routing_key: 'q' }, null],
    [{ type: 'nats', broker: 'stream', subject: 'a.b.c' }, null],
    [null, 'destination must be an object'],
    [{ type: 'sqs' }, 'destination.type'],
    [{ type: 'http', url: 'x' }, 'destination.url is not a field'],
    [{ type: 'rabbitmq', exchange: 'x', routing_key: 'k' }, 'destination.broker'],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'a b', routing_key: 'k' },
      'destination.exchange',
    ],
    [
      { type: 'rabbitmq', broker: 'bus', exchange: 'x', routing_key: 'é' },
      'destination.routing_key',
    ],
    [{ type: 'nats', broker: 'stream', subject: 'a.>' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a..b' }, 'destination.subject'],
    [{ type: 'nats', broker: 'stream', subject: 'a b' }, 'destination.subject'],
  ])('%j → %s', (value, problem) => {
    const message = destinationRule(value, 'destination');
    if (problem === null) expect(message).toBeNull();
    else expect(message).toContain(problem);
  });

  it('names destination.broker for an unknown broker or one of another type, never its URL', () => {
    expect(brokerProblem({ type: 'http' }, BROKERS)).toBeNull();
    expect(brokerProblem({ type: 'nats', broker: 'stream', subject: 'a' }, BROKERS)).toBeNull();
    const unknown = brokerProblem(
      { type: 'rabbitmq', broker: 'nope', exchange: 'x', routing_key: 'k' },
      BROKERS,
    );
    expect(unknown).toMatch(
      /^destination\.broker "nope" is not a configured rabbitmq broker; configured: bus$/,
    );
    const other = brokerProblem({ type: 'nats', broker: 'bus', subject: 'a' }, BROKERS);
    expect(other).toBe('destination.broker "bus" is a rabbitmq broker, not nats');
    expect(`${unknown}${other}`).not.toContain('u:p');
  });
});
