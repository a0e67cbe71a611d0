import { once } from 'node:events';
import { AddressInfo, Server, createServer } from 'node:net';
import { loadConfig } from '../config/load-config';
import { dependencyWarnings, startupProblem } from './startup-problems';

const config = loadConfig({
  PORT: '3100',
  DATABASE_URL: 'postgres://app:hunter2@db.internal:5433/bridge',
  REDIS_URL: 'redis://cache.internal:6380',
});

const error = (fields: Record<string, unknown>) => Object.assign(new Error('boom'), fields);

describe('startupProblem', () => {
  it('names PORT when it is taken', () => {
    expect(
      startupProblem(error({ code: 'EADDRINUSE', syscall: 'listen', port: 3100 }), config),
    ).toBe(
      'PORT 3100 is already in use (another npm start or npm run tryout?): stop that process, or set PORT to a free port',
    );
  });

  it('names DATABASE_URL, without its password, when PostgreSQL is away', () => {
    const problem = startupProblem(
      error({ code: 'ECONNREFUSED', syscall: 'connect', address: 'db.internal', port: 5433 }),
      config,
    );
    expect(problem).toBe(
      'PostgreSQL at db.internal:5433/bridge (DATABASE_URL) cannot be reached: connection refused. ' +
        'Check DATABASE_URL and that PostgreSQL is running and accepts connections',
    );
    expect(problem).not.toContain('hunter2');
  });

  it('names DATABASE_URL when PostgreSQL refuses the login or has no such database', () => {
    expect(startupProblem(error({ code: '28P01' }), config)).toMatch(
      /^PostgreSQL at db\.internal:5433\/bridge \(DATABASE_URL\) refused the connection: password authentication failed/,
    );
    expect(startupProblem(error({ code: '3D000' }), config)).toContain(
      'the database does not exist',
    );
  });

  it('names REDIS_URL when the error is about Redis', () => {
    expect(
      startupProblem(error({ code: 'ENOTFOUND', hostname: 'cache.internal', port: 6380 }), config),
    ).toBe(
      'Redis at cache.internal:6380 (REDIS_URL) cannot be reached: host not found. ' +
        'Check REDIS_URL and that Redis is running and accepts connections',
    );
  });

  it('says nothing of an error it does not know', () => {
    expect(startupProblem(new Error('something else'), config)).toBeUndefined();
    expect(startupProblem('text', config)).toBeUndefined();
  });
});

describe('dependencyWarnings', () => {
  let open: Server;
  let closedPort: number;
  const openPort = () => (open.address() as AddressInfo).port;

  beforeAll(async () => {
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    open = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
    await once(open, 'listening');
  });
  afterAll(() => new Promise((resolve) => open.close(resolve)));

  const at = (databasePort: number, redisPort: number) =>
    loadConfig({
      DATABASE_URL: `postgres://app:hunter2@127.0.0.1:${databasePort}/bridge`,
      REDIS_URL: `redis://:sesame@127.0.0.1:${redisPort}/2`,
    });

  it('says nothing when both take a connection', async () => {
    expect(await dependencyWarnings(at(openPort(), openPort()))).toEqual({
      postgres: undefined,
      redis: undefined,
    });
  });

  it('names each one that does not, its variable and what the start does, without passwords', async () => {
    const said = await dependencyWarnings(at(closedPort, closedPort));
    expect(said.postgres).toBe(
      `PostgreSQL at 127.0.0.1:${closedPort}/bridge (DATABASE_URL) does not answer: connection ` +
        'refused. Waiting for it (5 tries 2 s apart, about 10 s), then the start fails. Check ' +
        'DATABASE_URL and that PostgreSQL is running',
    );
    expect(said.redis).toBe(
      `Redis at 127.0.0.1:${closedPort}/2 (REDIS_URL) does not answer: connection refused. ` +
        'Starting without it: until it answers, /health/ready answers 503 and queued work ' +
        'waits (its client keeps trying). Check REDIS_URL and that Redis is running',
    );
    expect(JSON.stringify(said)).not.toMatch(/hunter2|sesame/);
  });
});
