import { Writable } from 'node:stream';
import { AppConfig } from '../config/config.types';
import { AppLogger, redactUrl } from './logging';

/** An AppLogger writing to an array of parsed lines. */
function capture(logLevel = 'info') {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const config = { logLevel, role: { name: 'worker' } } as AppConfig;
  return { logger: new AppLogger(config, stream), lines };
}

describe('AppLogger (Nest lines as pino lines)', () => {
  it('writes the message with its context, level and the service fields', () => {
    const { logger, lines } = capture();
    logger.warn('receiver slow', 'DeliveryAttemptService');
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'receiver slow',
        context: 'DeliveryAttemptService',
        service: 'meeting-event-bridge',
        role: 'worker',
      }),
    ]);
  });

  it('keeps an Error as err, and takes the stack Nest passes as a string with its message', () => {
    const { logger, lines } = capture();
    logger.error(new Error('boom'), 'Sweeper');
    logger.error(
      'unhandled',
      'Error: unhandled\n    at somewhere (file.js:1:1)',
      'ExceptionsHandler',
    );
    expect(lines[0]).toMatchObject({ level: 50, context: 'Sweeper', err: { message: 'boom' } });
    expect(lines[1]).toMatchObject({
      level: 50,
      context: 'ExceptionsHandler',
      err: { message: 'unhandled', stack: 'Error: unhandled\n    at somewhere (file.js:1:1)' },
    });
  });

  it('merges an object message into the line, and writes nothing below LOG_LEVEL', () => {
    const { logger, lines } = capture('info');
    logger.log({ deliveries: 3 }, 'Dispatcher');
    logger.debug('not written', 'Dispatcher');
    logger.verbose('not written either');
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, deliveries: 3, context: 'Dispatcher' }),
    ]);
  });

  it("redacts an object message's msg as it redacts a plain message", () => {
    const { logger, lines } = capture();
    logger.warn({ msg: 'failed: GET https://r.example/h?token=abc', trace_id: 't' }, 'Attempts');
    expect(lines[0]).toMatchObject({
      msg: 'failed: GET https://r.example/h?token=[redacted]',
      trace_id: 't',
    });
  });
});

describe('redactUrl (credentials in query strings, by name)', () => {
  it.each([
    [
      '/oauth/token?client_secret=s3cr3t&grant_type=x',
      '/oauth/token?client_secret=[redacted]&grant_type=x',
    ],
    ['/api/x?access_token=eyJhbGciOi.x.y', '/api/x?access_token=[redacted]'],
    [
      '/a?page_size=3&token=t&refresh_token=r',
      '/a?page_size=3&token=[redacted]&refresh_token=[redacted]',
    ],
    [
      '/a?Password=p&api_key=k&x-amz-signature=z',
      '/a?Password=[redacted]&api_key=[redacted]&x-amz-signature=[redacted]',
    ],
    ['/a?client%5Fsecret=s', '/a?client%5Fsecret=[redacted]'],
    [
      'POST https://hooks.example/x?secret=abc failed: HTTP 500',
      'POST https://hooks.example/x?secret=[redacted] failed: HTTP 500',
    ],
  ])('%s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('leaves text without such parameters alone', () => {
    expect(redactUrl('/api/webhooks?limit=5&cursor=abc')).toBe('/api/webhooks?limit=5&cursor=abc');
    expect(redactUrl('no url here')).toBe('no url here');
  });

  it('masks them in AppLogger lines, errors included', () => {
    const { logger, lines } = capture();
    logger.warn('delivery to https://h.example/?token=tok1 failed', 'Dispatcher');
    logger.error(new Error('GET /x?access_token=tok2 refused'), 'Dispatcher');
    const text = JSON.stringify(lines);
    expect(text).not.toMatch(/tok1|tok2/);
    expect(text).toContain('token=[redacted]');
  });

  it("writes Nest's start-up chatter and a failed start's retries at debug, other lines as given", () => {
    const { logger, lines } = capture('info');
    logger.log('WebhooksController {/api/webhooks}:', 'RoutesResolver');
    logger.log('Mapped {/api/webhooks, GET} route', 'RouterExplorer');
    logger.log('AppModule dependencies initialized', 'InstanceLoader');
    logger.error(
      'Unable to connect to the database. Retrying (1)...',
      'Error: connect ECONNREFUSED\n    at x (y.js:1:1)',
      'TypeOrmModule',
    );
    logger.error(new Error('connect ECONNREFUSED'), 'ExceptionHandler');
    logger.log('listening on :3000 as role all', 'Bootstrap');
    logger.log('AppModule dependencies initialized', 'SomethingElse');
    expect(lines.map((l) => [l.level, l.context])).toEqual([
      [30, 'Bootstrap'],
      [30, 'SomethingElse'],
    ]);
  });
});
