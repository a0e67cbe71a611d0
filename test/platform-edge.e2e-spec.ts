import { once } from 'node:events';
import { DataSource } from 'typeorm';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { meetingStarted, meetingUuid, recordingCompleted } from '../scripts/platform/zoom-events';
import { request } from './support/http';
import { reservedConnections } from '../src/common/http-server';
import { rawExchange } from './support/raw-http';
import { Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';

/**
 * Issue 27: what the platform sends at the edge of what the store holds is neither refused nor
 * lost (docs/api.md#platform-events-post-zoomevents), credentials stay out of the log (docs/operations.md#logs), deliveries take a receiver's interim
 * answers, and a full server answers 503 rather than resetting connections.
 */
describe('the platform edge (docs/api.md#platform-events-post-zoomevents, docs/api.md#errors, docs/operations.md#logs)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let paths: { asIs: string; started: string; complete: string };

  const db = <T>(sql: string, params: unknown[] = []) =>
    t.app.get(DataSource).query(sql, params) as Promise<T[]>;
  const delivered = (path: string, uuid: string) =>
    receiver
      .requests(path)
      .map((r) => r.body.toString('utf8'))
      .filter((body) => body.includes(uuid));
  const trackedRow = (trackingId: string) =>
    db<{ id: string; payload: string; raw_body: Buffer | null; processed: boolean }>(
      `SELECT id, payload::text AS payload, raw_body, processed_at IS NOT NULL AS processed
       FROM inbound_events WHERE tracking_id = $1`,
      [trackingId],
    ).then((rows) => rows[0]);

  /** Signs and sends exact bytes with a tracking id of their own. */
  const sendRaw = (text: string, trackingId: string) =>
    sendZoomEvent(t.baseUrl, Buffer.from(text, 'utf8'), { trackingId });

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ env: { RECORDING_AUTOMATION_BACKOFF_MS: '60000' } });
    const route = (name: string, events: string[]) => {
      const { url, path } = receiver.route({}, name);
      return createWebhook(t, { url, events }).then(() => path);
    };
    paths = {
      asIs: await route('as-is', ['zoom.*']),
      started: await route('started', ['job.started']),
      complete: await route('complete', ['operation.complete', 'operation.failed']),
    };
  });
  afterAll(async () => {
    await t?.close();
    // Bodies built from mutated platform data need not fit the catalog's schemas.
    receiver.schemaViolations.length = 0;
    await receiver?.close();
  });

  it('stores text jsonb cannot hold and delivers it exactly as it came', async () => {
    const uuid = meetingUuid();
    const event = meetingStarted(uuid);
    const topic = 'Board\u0000meeting \ud800 end';
    (event.payload.object as Record<string, unknown>).topic = topic;
    const res = await sendRaw(JSON.stringify(event), 'edge-nul');
    expect(res.status).toBe(200);

    const row = await trackedRow('edge-nul');
    expect(row.payload).toContain('Board\uFFFDmeeting \uFFFD end');
    expect(JSON.parse(row.raw_body!.toString('utf8')).payload.object.topic).toBe(topic);
    for (const path of [paths.asIs, paths.started]) {
      const [body] = await waitFor(() => delivered(path, uuid).length > 0 && delivered(path, uuid));
      const data = JSON.parse(body).data;
      expect(path === paths.asIs ? data.object.topic : data.topic).toBe(topic);
    }
  });

  it('keeps numbers past 2^53 and past the double range, and the automation still works', async () => {
    const uuid = meetingUuid();
    const event = recordingCompleted(uuid, 'dl-token-kept-encrypted');
    const object = event.payload.object as Record<string, unknown>;
    object.duration = 123;
    object.total_size = 456;
    const text = JSON.stringify(event)
      .replace('"duration":123', '"duration":1e400')
      .replace('"total_size":456', '"total_size":9223372036854775808');
    expect(text).toContain('1e400');
    const res = await sendRaw(text, 'edge-numbers');
    expect(res.status).toBe(200);

    const row = await waitFor(async () => {
      const r = await trackedRow('edge-numbers');
      return r?.processed && r;
    });
    expect(row.payload).toContain('9223372036854775808');
    expect(row.payload).not.toContain('dl-token-kept-encrypted');
    const [asIs] = await waitFor(
      () => delivered(paths.asIs, uuid).length > 0 && delivered(paths.asIs, uuid),
    );
    expect(asIs).toMatch(/"duration":(1e400|10{400})[,}]/);
    expect(asIs).toContain('"total_size":9223372036854775808');
    expect(asIs).not.toContain('dl-token');
    const [outcome] = await waitFor(
      () => delivered(paths.complete, uuid).length > 0 && delivered(paths.complete, uuid),
    );
    expect(JSON.parse(outcome).event).toBe('operation.complete');
  });

  it('takes a recording whose file list holds a null, with the other files', async () => {
    const uuid = meetingUuid();
    const event = recordingCompleted(uuid, 'dl-token-null-file');
    const object = event.payload.object as { recording_files: unknown[] };
    const files = object.recording_files.length;
    object.recording_files = [null, ...object.recording_files, 'not a file', 7];
    expect((await sendRaw(JSON.stringify(event), 'edge-null-file')).status).toBe(200);

    const [outcome] = await waitFor(
      () => delivered(paths.complete, uuid).length > 0 && delivered(paths.complete, uuid),
    );
    const body = JSON.parse(outcome);
    expect(body.event).toBe('operation.complete');
    expect(body.data.files).toHaveLength(files);
  });

  it('keeps, counts, logs and delivers as it came an event that cannot be mapped, at once', async () => {
    const uuid = meetingUuid();
    const recording = recordingCompleted(uuid, 'dl-token-unmappable');
    const object = recording.payload.object as Record<string, unknown>;
    delete object.id;
    delete object.uuid;
    object.marker = uuid;
    const started = {
      ...meetingStarted(uuid),
      payload: { account_id: 'x', object: null, marker: uuid },
    };
    expect((await sendRaw(JSON.stringify(recording), 'edge-unmappable-1')).status).toBe(200);
    expect((await sendRaw(JSON.stringify(started), 'edge-unmappable-2')).status).toBe(200);

    for (const trackingId of ['edge-unmappable-1', 'edge-unmappable-2']) {
      const row = await waitFor(async () => {
        const r = await trackedRow(trackingId);
        return r?.processed && r;
      });
      expect(t.logs.some((l) => l.includes(row.id) && l.includes('cannot be mapped'))).toBe(true);
    }
    await waitFor(() => delivered(paths.asIs, uuid).length === 2);
    expect(delivered(paths.started, uuid)).toEqual([]);
    expect(delivered(paths.complete, uuid)).toEqual([]);
    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /inbound_events_total\{event="recording.completed",outcome="unmappable",via="webhook"\} 1/,
    );
    expect(metrics).toMatch(
      /inbound_events_total\{event="meeting.started",outcome="unmappable",via="webhook"\} 1/,
    );
  });

  it('keeps a webhook secret with a control character whole; refuses an unpaired surrogate', async () => {
    const token = await t.token();
    const url = receiver.route({}, 'secrets').url;
    const created = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: { url, events: ['job.started'], secret: 'a-secret-ending-in-nul\u0000' },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret_hint).toBe('nul\uFFFD');
    const patched = await request(t.baseUrl, 'PATCH', `/api/webhooks/${created.body.id}`, {
      token,
      body: { secret: 'another-secret-\u0001\u0000' },
    });
    expect(patched.status).toBe(200);
    const refused = await request(t.baseUrl, 'PATCH', `/api/webhooks/${created.body.id}`, {
      token,
      body: { secret: 'an-unpaired-surrogate-\ud800' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details.map((d: { field: string }) => d.field)).toEqual(['secret']);
  });

  it('writes no credential to any log line, whatever the answer', async () => {
    const secrets = Array.from(
      { length: 9 },
      (_, i) => `cred-${i}-${Math.random().toString(36).slice(2)}`,
    );
    const marker = `log-test-${Date.now()}`;
    const asks: [string, string, Record<string, string>][] = [
      ['POST', `/oauth/token?client_secret=${secrets[0]}`, {}],
      ['GET', `/api/webhooks?access_token=${secrets[1]}&limit=1`, {}],
      ['GET', '/api/webhooks', { 'proxy-authorization': `Basic ${secrets[2]}` }],
      ['GET', '/api/webhooks', { 'x-access-token': secrets[3] }],
      ['GET', '/api/webhooks', { authorization: `Bearer ${secrets[4]}` }],
      ['GET', '/api/webhooks', { cookie: `session=${secrets[5]}` }],
      ['POST', `/zoom/events?token=${secrets[6]}`, { 'x-zm-signature': `v0=${secrets[7]}` }],
      ['GET', `/api/webhooks?password=${secrets[8]}`, { 'x-api-key': secrets[8] }],
    ];
    for (const [method, path, headers] of asks) {
      const res = await fetch(`${t.baseUrl}${path}`, {
        method,
        headers: { ...headers, 'x-request-id': `${marker}-${path.length}-${method}` },
        body: method === 'POST' ? '{}' : undefined,
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      await res.arrayBuffer();
    }
    await waitFor(() => t.logs.filter((l) => l.includes(marker)).length >= asks.length);
    const all = t.logs.join('\n');
    for (const secret of secrets) expect(all).not.toContain(secret);
    expect(all).toContain('client_secret=[redacted]');
  });

  describe('a receiver that sends 100 Continue before its 200', () => {
    let server: Server;
    const answered: number[] = [];

    beforeAll(async () => {
      server = createServer((socket: Socket) => {
        let seen = '';
        socket.on('data', (chunk: Buffer) => {
          seen += chunk.toString('latin1');
          const end = seen.indexOf('\r\n\r\n');
          if (end < 0) return;
          const length = Number(/content-length: *(\d+)/i.exec(seen)?.[1] ?? 0);
          if (seen.length < end + 4 + length) return;
          seen = seen.slice(end + 4 + length);
          answered.push(Date.now());
          socket.write('HTTP/1.1 100 Continue\r\n\r\n');
          socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    it('gets its deliveries through, at the first attempt', async () => {
      const { port } = server.address() as AddressInfo;
      const hook = await createWebhook(t, {
        url: `http://127.0.0.1:${port}/interim`,
        events: ['job.started'],
      });
      expect((await sendZoomEvent(t.baseUrl, meetingStarted(meetingUuid()))).status).toBe(200);
      const [delivery] = await waitFor(async () => {
        const rows = await db<{ status: string; attempt_count: number; last_error: string | null }>(
          `SELECT status, attempt_count, last_error FROM deliveries WHERE webhook_id = $1`,
          [hook.id],
        );
        return rows[0]?.status !== 'pending' && rows;
      });
      expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    });
  });
});

describe('HTTP_MAX_CONNECTIONS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { HTTP_MAX_CONNECTIONS: '3', APP_ROLE: 'api' } });
  });
  afterAll(() => t?.close());

  const open = async (): Promise<Socket> => {
    const { hostname, port } = new URL(t.baseUrl);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    return socket;
  };
  const live = `GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;

  /** A POST whose body never comes: it holds its connection until the request timeout. */
  const slowBody = async (): Promise<Socket> => {
    const socket = await open();
    socket.on('error', () => undefined);
    socket.write(
      'POST /api/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Content-Length: 1000\r\n\r\n{',
    );
    return socket;
  };
  const other = `GET /api/event-types HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;

  it('keeps /health/* and /zoom/events served while slow bodies hold every connection; 503 with Retry-After for the rest, and when the reserve is full too', async () => {
    const held = [await slowBody(), await slowBody(), await slowBody()];
    const reserve = reservedConnections(3);
    try {
      // The server counts a connection once it has accepted it: wait until the cap is reached.
      const refused = await waitFor(
        async () => {
          const answer = await rawExchange(t.baseUrl, other, { deadlineMs: 5000 });
          return answer.status === 503 && answer;
        },
        { what: 'GET /api/event-types refused once the slow bodies hold the cap' },
      );
      expect(refused.text).toMatch(/\r\nRetry-After: 1\r\n/i);
      expect(refused.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
      expect(refused.ended).toBe('closed');

      for (const probe of ['/health/live', '/health/ready']) {
        const answer = await rawExchange(
          t.baseUrl,
          `GET ${probe} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
          { deadlineMs: 10_000 },
        );
        expect({ probe, status: answer.status }).toEqual({ probe, status: 200 });
      }
      const event = await sendZoomEvent(t.baseUrl, meetingStarted(`cap-${Date.now()}`));
      expect(event.status).toBe(200);

      // The reserve full too (idle connections): refused at the door.
      for (let i = 0; i < reserve; i += 1) held.push(await open());
      const full = await waitFor(
        async () => {
          const answer = await rawExchange(t.baseUrl, live, { deadlineMs: 5000 });
          return answer.status === 503 && answer;
        },
        { what: '/health/live refused once the reserve is full too' },
      );
      expect(full.text).toMatch(/\r\nRetry-After: 1\r\n/i);
    } finally {
      for (const socket of held) socket.destroy();
    }
    // Served again (401: the route runs, and wants a token).
    const served = await waitFor(
      async () => {
        const answer = await rawExchange(t.baseUrl, other, { deadlineMs: 5000 });
        return answer.status === 401 && answer;
      },
      { what: 'GET /api/event-types served once the connections closed' },
    );
    expect(served.body).toMatchObject({ statusCode: 401 });
  });
});
