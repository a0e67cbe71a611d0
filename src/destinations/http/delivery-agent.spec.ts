import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { createDeliveryAgent, guardedLookup } from './delivery-agent';

describe('guardedLookup', () => {
  const lookupWith = (allowPrivate: boolean, ...addresses: string[]) =>
    guardedLookup(allowPrivate, async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  const call = (
    lookup: ReturnType<typeof guardedLookup>,
    options: { all?: boolean; family?: number },
  ) =>
    new Promise<{ error: Error | null; result: unknown; family?: number }>((resolve) =>
      lookup('hooks.example.com', options, (error, result, family) =>
        resolve({ error, result, family }),
      ),
    );

  it('answers with public addresses, in both callback forms', async () => {
    const lookup = lookupWith(false, '93.184.216.34', '2606:4700:4700::1111');
    expect(await call(lookup, { all: true })).toMatchObject({
      error: null,
      result: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700:4700::1111', family: 6 },
      ],
    });
    expect(await call(lookup, {})).toMatchObject({ result: '93.184.216.34', family: 4 });
    expect(await call(lookup, { family: 6 })).toMatchObject({
      result: '2606:4700:4700::1111',
      family: 6,
    });
  });

  it('refuses a name that resolves to any private address', async () => {
    const { error } = await call(lookupWith(false, '93.184.216.34', '169.254.169.254'), {
      all: true,
    });
    expect(error?.message).toMatch(/169\.254\.169\.254, a private or special-purpose address/);
  });

  it('allows private addresses when told to', async () => {
    expect(await call(lookupWith(true, '10.0.0.7'), {})).toMatchObject({ result: '10.0.0.7' });
  });
});

describe('createDeliveryAgent', () => {
  it('connects to the address the guarded lookup checked, so a rebound name never reaches a private host', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.end('ok');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    // The name passed the policy check a moment ago; now it resolves to loopback.
    const rebound = async () => [{ address: '127.0.0.1', family: 4 }];
    const strict = createDeliveryAgent({
      allowPrivate: false,
      timeoutMs: 2000,
      connections: 2,
      resolveAll: rebound,
    });
    const lenient = createDeliveryAgent({
      allowPrivate: true,
      timeoutMs: 2000,
      connections: 2,
      resolveAll: rebound,
    });
    try {
      const url = `http://rebind.invalid:${port}/`;
      await expect(request(url, { dispatcher: strict })).rejects.toThrow(
        /private or special-purpose/,
      );
      expect(requests).toBe(0);
      // The same name through a pool that allows private addresses does connect there,
      // which shows the connection really goes where the lookup said.
      const res = await request(url, { dispatcher: lenient });
      expect(await res.body.text()).toBe('ok');
      expect(requests).toBe(1);
    } finally {
      await strict.close();
      await lenient.close();
      server.close();
    }
  });
});
