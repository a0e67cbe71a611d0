import { once } from 'node:events';
import WebSocket from 'ws';
import { FakeZoomWs } from './support/fake-zoom-ws';
import { waitFor } from './support/wait-for';

/** The fake platform socket behaves as the platform's documentation says (its own contract). */
describe('FakeZoomWs', () => {
  let fake: FakeZoomWs;
  const good = 'good-token';

  beforeEach(async () => {
    fake = await FakeZoomWs.start({ acceptsToken: (token) => token === good });
  });
  afterEach(() => fake.close());

  const connect = (token = good, subscription = fake.subscriptionId) => {
    const ws = new WebSocket(`${fake.url}?subscriptionId=${subscription}&access_token=${token}`);
    const frames: Record<string, unknown>[] = [];
    ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8'))));
    ws.on('error', () => undefined);
    return { ws, frames };
  };
  const statusOf = async (ws: WebSocket) =>
    (await once(ws, 'unexpected-response'))[1].statusCode as number;

  it('acknowledges a good token, answers heartbeats and pushes events as JSON text', async () => {
    const { ws, frames } = connect();
    await waitFor(() => frames.length === 1, { what: 'the acknowledgement' });
    expect(frames[0]).toMatchObject({ module: 'build_connection', success: true });
    ws.send(JSON.stringify({ module: 'heartbeat' }));
    await waitFor(() => frames.length === 2, { what: 'the heartbeat answer' });
    expect(frames[1]).toMatchObject({ module: 'heartbeat' });
    fake.push({ event: 'meeting.started', payload: {} });
    await waitFor(() => frames.length === 3, { what: 'the event' });
    expect(frames[2]).toEqual({
      module: 'message',
      content: JSON.stringify({ event: 'meeting.started', payload: {} }),
    });
    ws.close();
  });

  it('refuses an unknown subscription (404) and a bad token (401, build_connection false, 1008)', async () => {
    expect(await statusOf(connect(good, 'other').ws)).toBe(404);
    expect(await statusOf(connect('bad').ws)).toBe(401);
    fake.refusal = 'build_connection';
    const refused = connect('bad');
    await waitFor(() => refused.frames.length === 1, { what: 'the refusal' });
    expect(refused.frames[0]).toEqual({ module: 'build_connection', success: false });
    refused.ws.close();
    fake.refusal = 'close1008';
    const [code] = await once(connect('bad').ws, 'close');
    expect(code).toBe(1008);
    expect(fake.connections).toHaveLength(0);
  });

  it('keeps one connection per subscription: a newer one closes the older', async () => {
    const first = connect();
    await waitFor(() => first.frames.length === 1, { what: 'first acknowledged' });
    const second = connect();
    const [code] = await once(first.ws, 'close');
    expect(code).toBe(4000);
    await waitFor(() => second.frames.length === 1, { what: 'second acknowledged' });
    expect(fake.replaced).toBe(1);
    expect(fake.maxOpen).toBe(2);
    second.ws.close();
  });

  it('stops answering while silent, and closes the connection on demand', async () => {
    fake.silent = true;
    const { ws, frames } = connect();
    await once(ws, 'open');
    ws.send(JSON.stringify({ module: 'heartbeat' }));
    fake.closeCurrent(1001);
    const [code] = await once(ws, 'close');
    expect(code).toBe(1001);
    expect(frames).toEqual([]);
    expect(fake.heartbeats).toBe(0);
  });

  it('acknowledges and closes at once on demand, and sends binary frames as they are', async () => {
    fake.closeAfterAcknowledging = 1;
    const first = connect();
    const [code] = await once(first.ws, 'close');
    expect(code).toBe(1001);
    expect(first.frames).toEqual([expect.objectContaining({ module: 'build_connection' })]);
    const ws = new WebSocket(
      `${fake.url}?subscriptionId=${fake.subscriptionId}&access_token=${good}`,
    );
    const received: { data: Buffer; isBinary: boolean }[] = [];
    ws.on('message', (data: Buffer, isBinary: boolean) => received.push({ data, isBinary }));
    await waitFor(() => received.length === 1, { what: 'the second connection acknowledged' });
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x7b]);
    fake.pushFrame(bytes);
    await waitFor(() => received.length === 2, { what: 'the binary frame' });
    expect(received[1]).toEqual({ data: bytes, isBinary: true });
    ws.close();
  });
});
