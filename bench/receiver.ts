/**
 * A subscriber in a process of its own, for bench/deployed.ts: node:http on 127.0.0.1, every
 * request answered 200 after RECEIVER_DELAY_MS (0: at once). It records each notification's
 * arrival time by the meeting uuid it carries and the path it came to, and the most requests
 * it had open at once (received, not yet answered). Reports its port over IPC, then answers
 * the parent's messages: `count` (distinct arrivals so far whose uuid starts with `prefix`),
 * `report` (all of it), `reset`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { now } from './support';

const DELAY_MS = Number(process.env.RECEIVER_DELAY_MS ?? 0);

const arrivals = new Map<string, number>();
let duplicates = 0;
let open = 0;
let peakOpen = 0;

const server = createServer((req, res) => {
  open++;
  peakOpen = Math.max(peakOpen, open);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = now();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { uuid: string } };
    const key = `${body.data.uuid} ${req.url}`;
    if (arrivals.has(key)) duplicates++;
    else arrivals.set(key, at);
    const answer = () => {
      open--;
      res.writeHead(200).end();
    };
    if (DELAY_MS > 0) setTimeout(answer, DELAY_MS);
    else answer();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.send!({ port: (server.address() as AddressInfo).port });
});

process.on('message', (message: { cmd: 'count' | 'report' | 'reset'; prefix?: string }) => {
  if (message.cmd === 'count') {
    // Only the burst's: a warm-up's late arrivals must not stand in for it.
    let count = 0;
    for (const key of arrivals.keys()) if (key.startsWith(message.prefix ?? '')) count++;
    process.send!({ count });
  } else if (message.cmd === 'report') {
    process.send!({ arrivals: [...arrivals], duplicates, peakOpen });
  } else {
    arrivals.clear();
    duplicates = 0;
    peakOpen = open;
    process.send!({ reset: true });
  }
});
process.on('disconnect', () => process.exit(0));
