import { Injectable } from '@nestjs/common';

/** docs/inbound-sources.md#status: how the platform socket stands. */
export const SOCKET_STATES = ['connected', 'connecting', 'standby', 'off'] as const;
export type SocketStateName = (typeof SOCKET_STATES)[number];

/**
 * This process's own view of the socket, for /health/ready: `off` without a subscription
 * (or in a process that never holds it: role api), `standby` while another holds it or the
 * lease is being taken, `connecting` and `connected` on the holder.
 */
@Injectable()
export class SocketState {
  current: SocketStateName = 'off';
}
