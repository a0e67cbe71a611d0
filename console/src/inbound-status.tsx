import { Api } from './api';
import { ErrorMessage, StatusBadge, TableBox, useLoad, when } from './ui';

/** GET /api/inbound/status (docs/inbound-sources.md#status). */
export interface InboundStatus {
  webhook: { configured: boolean; last_event_at: string | null };
  websocket: {
    configured: boolean;
    state: 'connected' | 'connecting' | 'standby' | 'off';
    connected_since: string | null;
    last_frame_at: string | null;
    reconnects: number;
    gaps: { from: string; until: string | null; reconciliation_id: string | null }[];
  };
}

/** How often the status is read again while shown: a socket's state changes within seconds. */
const POLL_MS = 5000;

/**
 * The inbound status for a client holding bridge:admin: the webhook, the platform socket's
 * state, and its latest gaps (a gap is a window the platform sent nothing over the socket).
 */
export function InboundStatusPanel({ api }: { api: Api }) {
  const status = useLoad(() => api.get<InboundStatus>('/api/inbound/status'), [api], POLL_MS);
  const s = status.data;
  return (
    <section aria-labelledby="inbound-status">
      <h2 id="inbound-status">Inbound status</h2>
      <ErrorMessage error={status.error} />
      {!s && !status.error && <p role="status">Loading…</p>}
      {s && (
        <>
          <dl class="facts">
            <dt>Webhook</dt>
            <dd>
              {s.webhook.configured ? 'configured' : 'not configured'}, latest event{' '}
              {when(s.webhook.last_event_at)}
            </dd>
            <dt>WebSocket</dt>
            <dd>
              <StatusBadge status={s.websocket.state} />
              {s.websocket.state === 'connected' && ` since ${when(s.websocket.connected_since)}`}
            </dd>
            <dt>Latest frame</dt>
            <dd>{when(s.websocket.last_frame_at)}</dd>
            <dt>Reconnects</dt>
            <dd>{s.websocket.reconnects}</dd>
          </dl>
          <TableBox label="Gaps">
            <table aria-label="Gaps">
              <thead>
                <tr>
                  <th scope="col">From</th>
                  <th scope="col">Until</th>
                  <th scope="col">Reconciliation</th>
                </tr>
              </thead>
              <tbody>
                {s.websocket.gaps.length === 0 && (
                  <tr>
                    <td colSpan={3}>No gaps</td>
                  </tr>
                )}
                {s.websocket.gaps.map((gap) => (
                  <tr key={gap.from}>
                    <td>{when(gap.from)}</td>
                    <td>{gap.until ? when(gap.until) : 'open'}</td>
                    <td>{gap.reconciliation_id ?? (gap.until ? 'pending' : '—')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </>
      )}
    </section>
  );
}
