/**
 * The platform on this machine, for `npm run tryout -- --fake-platform`: the project's own
 * fakes of the platform's token endpoint and REST API (test/support/fake-zoom.ts), its event
 * WebSocket (fake-zoom-ws.ts) and its dashboard reports (fake-zoom-reports.ts), which the
 * end-to-end tests hold to the platform's documented behaviour. No account is needed: the
 * service gets credentials the fake issues tokens for, and the fake's reports list one meeting
 * that was never sent, for a reconciliation to find.
 *
 * A control server beside it lets `npm run send-event -- --via websocket …` push an event over
 * the open socket, as the platform would: `POST /socket/events` with the platform event's JSON.
 * The fakes keep what they serve in memory: each start is a new platform.
 */
import { once } from 'node:events';
import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import { DayMeeting, FakeReports } from '../../test/support/fake-zoom-reports';
import { FakeZoom } from '../../test/support/fake-zoom';
import { FakeZoomWs } from '../../test/support/fake-zoom-ws';
import { TRYOUT } from '../tryout-settings';
import { ACCOUNT_ID } from './zoom-events';

const SOCKET_EVENTS_PATH = TRYOUT.socketEventsPath;

/** How long before the start the missed meeting began, and how long it lasted. */
const MISSED_AGO_MS = 2 * 3600_000;
const MISSED_DURATION_MS = 30 * 60_000;

export interface FakePlatform {
  /** What the service needs to use it: credentials, token URL, REST base, socket URL. */
  env: Record<string, string>;
  /** The control server's base URL. */
  controlUrl: string;
  /** The meeting its reports list that no event ever told of. */
  missed: DayMeeting;
  close(): Promise<void>;
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(`${JSON.stringify(body)}\n`);
}

/**
 * Starts the fakes (on ports of their own choosing, on 127.0.0.1) and the control server on
 * `controlPort`; rejects when that port is taken.
 */
export async function startFakePlatform(controlPort: number): Promise<FakePlatform> {
  // The samples' account, so events pushed over the socket and reconciled ones name the same.
  const zoom = await FakeZoom.start({ accountId: ACCOUNT_ID });
  const socket = await FakeZoomWs.start({
    subscriptionId: 'tryout-subscription',
    acceptsToken: (token) => zoom.acceptsToken(token),
  });
  const reports = new FakeReports(zoom);
  const start = Math.floor((Date.now() - MISSED_AGO_MS) / 1000) * 1000;
  const [missed] = reports.addDay({
    from: new Date(start).toISOString(),
    meetings: 1,
    participantsEach: 2,
    durationMs: MISSED_DURATION_MS,
  });
  missed.meeting.topic = 'The meeting no event told of';

  const control = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== SOCKET_EVENTS_PATH) {
        answer(res, 404, {
          message: `the fake platform's control takes POST ${SOCKET_EVENTS_PATH} only`,
        });
        return;
      }
      let event: unknown;
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        answer(res, 400, { message: `the body is not JSON: ${(error as Error).message}` });
        return;
      }
      if (socket.current === null) {
        answer(res, 409, {
          message:
            'no socket is open to the fake platform: the service connects within seconds of ' +
            'its start (meb inbound status shows its state)',
        });
        return;
      }
      socket.push(event);
      answer(res, 202, { pushed: (event as { event?: unknown }).event ?? null });
    });
  });
  control.listen(controlPort, '127.0.0.1');
  await Promise.race([
    once(control, 'listening'),
    once(control, 'error').then(([error]: Error[]) => {
      throw error;
    }),
  ]).catch(async (error: Error & { code?: string }) => {
    await Promise.all([zoom.close(), socket.close()]);
    throw new Error(
      error.code === 'EADDRINUSE'
        ? `the fake platform's port ${controlPort} is taken (another npm run tryout -- ` +
            '--fake-platform?): stop it, or pass --fake-platform-port <a free port>'
        : `the fake platform cannot listen on ${controlPort}: ${error.message}`,
    );
  });

  return {
    env: { ...zoom.env(), ...socket.env(30_000) },
    controlUrl: `http://127.0.0.1:${controlPort}`,
    missed,
    close: async () => {
      await new Promise<void>((resolve) => control.close(() => resolve()));
      await Promise.all([zoom.close(), socket.close()]);
    },
  };
}
