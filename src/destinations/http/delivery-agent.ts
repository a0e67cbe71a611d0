import { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { skipInterimResponses } from './interim-responses';
import { checkWebhookUrl } from './ssrf-policy';

export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

const systemResolveAll: ResolveAll = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * A DNS lookup for outgoing connections that applies the webhook URL policy to the addresses
 * the socket is about to connect to. The policy check before an attempt resolves the name on
 * its own; checking again here, on the very answer used to connect, leaves no gap in which
 * the name could be re-pointed at a private address (DNS rebinding).
 */
export function guardedLookup(
  allowPrivate: boolean,
  resolveAll = systemResolveAll,
): LookupFunction {
  return (hostname, options, callback) => {
    const check = async (): Promise<LookupAddress[]> => {
      const found = await resolveAll(hostname);
      await checkWebhookUrl(`http://${hostname}/`, {
        allowPrivate,
        resolve: async () => found.map((a) => a.address),
      });
      const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
      const usable = family ? found.filter((a) => a.family === family) : found;
      if (usable.length === 0) throw new Error(`url host ${hostname} has no IPv${family} address`);
      return usable;
    };
    check().then(
      (addresses) =>
        options.all
          ? callback(null, addresses)
          : callback(null, addresses[0].address, addresses[0].family),
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

/**
 * The keep-alive connection pool deliveries go through: one pool per receiver origin, at most
 * `connections` sockets each, every connection made through guardedLookup. undici follows no
 * redirects unless told to, so a 3xx comes back as it is. Interim (1xx) answers are skipped.
 */
export function createDeliveryAgent(options: {
  allowPrivate: boolean;
  timeoutMs: number;
  connections: number;
  resolveAll?: ResolveAll;
}): Agent {
  return new Agent({
    connections: options.connections,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: interimTolerant(
      buildConnector({
        timeout: options.timeoutMs,
        lookup: guardedLookup(options.allowPrivate, options.resolveAll),
      }),
    ),
  });
}

/** Every connection made skips the receiver's interim (1xx) answers (see skipInterimResponses). */
function interimTolerant(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) =>
    connect(options, (...args) => {
      if (args[0] === null) skipInterimResponses(args[1]);
      callback(...args);
    });
}
