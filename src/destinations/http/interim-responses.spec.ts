import { once } from 'node:events';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import { request } from 'undici';
import { createDeliveryAgent } from './delivery-agent';

/**
 * A raw receiver: for each request (read up to its body's end) writes `interim` and then a
 * 200 with `body`, over one keep-alive connection. Written in the pieces given, to cross the
 * boundaries the parser could trip on.
 */
async function rawReceiver(interim: string[], body = 'ok') {
  const server = createServer((socket: Socket) => {
    let seen = '';
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      const end = seen.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(seen)?.[1] ?? 0);
      if (seen.length < end + 4 + length) return;
      seen = seen.slice(end + 4 + length);
      for (const piece of interim) socket.write(piece);
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

describe('deliveries skip interim (1xx) answers', () => {
  const agent = createDeliveryAgent({ allowPrivate: true, timeoutMs: 5000, connections: 1 });
  afterAll(() => agent.close());

  const post = async (url: string) => {
    const res = await request(url, { method: 'POST', dispatcher: agent, body: '{"a":1}' });
    return { status: res.statusCode, body: await res.body.text() };
  };

  it.each([
    ['an unsolicited 100 Continue', ['HTTP/1.1 100 Continue\r\n\r\n']],
    [
      'a 102 and a 103 with headers',
      ['HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n'],
    ],
    ['a 100 split across writes', ['HTT', 'P/1.1 10', '0 Continue\r', '\n\r\n']],
  ])('takes the final 200 after %s, twice on one connection', async (_name, interim) => {
    const { server, url } = await rawReceiver(interim, 'done');
    try {
      expect(await post(url)).toEqual({ status: 200, body: 'done' });
      expect(await post(url)).toEqual({ status: 200, body: 'done' });
    } finally {
      server.close();
    }
  });

  it('leaves a final answer that only looks like one alone', async () => {
    const { server, url } = await rawReceiver([], 'HTTP/1.1 100 x\r\n\r\n');
    try {
      expect(await post(url)).toEqual({ status: 200, body: 'HTTP/1.1 100 x\r\n\r\n' });
    } finally {
      server.close();
    }
  });
});
