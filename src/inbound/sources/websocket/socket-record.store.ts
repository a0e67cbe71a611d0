import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { query } from '../../../database/query';
import type { Statement } from '../../../delivery-record/statement';

/** One interval with no acknowledged socket (docs/inbound-sources.md#gaps). */
export interface SocketGap {
  from: Date;
  /** null while the gap is still open. */
  until: Date | null;
  reconciliationId: string | null;
}

/** What the holder of the socket last wrote, shared by every process. */
export interface SocketRecord {
  holder: string | null;
  state: 'connecting' | 'connected';
  connectedSince: Date | null;
  lastFrameAt: Date | null;
  reconnects: number;
}

interface StateRow {
  holder: string | null;
  state: 'connecting' | 'connected';
  connected_since: Date | null;
  last_frame_at: Date | null;
  reconnects: string;
}

interface GapRow {
  started_at: Date;
  ended_at: Date | null;
  reconciliation_id: string | null;
}

const UPSERT_STATE = `
  INSERT INTO inbound_socket_state (id, holder, state, connected_since, reconnects, updated_at)
  VALUES (1, $1, $2, $3, $4, now())
  ON CONFLICT (id) DO UPDATE SET
    holder = EXCLUDED.holder,
    state = EXCLUDED.state,
    connected_since = EXCLUDED.connected_since,
    reconnects = inbound_socket_state.reconnects + $4,
    updated_at = now()`;

const READ_SQL = `
  SELECT holder, state, connected_since, last_frame_at, reconnects
    FROM inbound_socket_state WHERE id = 1`;

const FRAME_SEEN_SQL = `
  UPDATE inbound_socket_state SET last_frame_at = greatest(last_frame_at, $1), updated_at = now()
    WHERE id = 1`;

const OPEN_GAP_SQL = `
  WITH held AS (
      SELECT EXISTS (SELECT 1 FROM inbound_socket_state
                      WHERE id = 1 AND state = 'connected' AND holder IS DISTINCT FROM $2::text) AS held
    ), opened AS (
      INSERT INTO inbound_gaps (started_at)
      SELECT $1::timestamptz FROM held WHERE NOT held.held
      ON CONFLICT DO NOTHING
      RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM opened) AS opened, (SELECT held FROM held) AS held`;

const OPEN_GAP_FROM_LAST_FRAME_SQL = `
  INSERT INTO inbound_gaps (started_at)
    SELECT last_frame_at FROM inbound_socket_state WHERE id = 1 AND last_frame_at IS NOT NULL
    ON CONFLICT DO NOTHING`;

const END_GAP_SQL = `
  UPDATE inbound_gaps SET ended_at = greatest($1, started_at) WHERE ended_at IS NULL`;

const LATEST_GAPS_SQL = `
  SELECT started_at, ended_at, reconciliation_id FROM inbound_gaps
    ORDER BY started_at DESC, created_at DESC LIMIT $1`;

export const SOCKET_RECORD_STATEMENTS: Statement[] = [
  { method: 'SocketRecordStore.connecting, .connected', sql: UPSERT_STATE },
  { method: 'SocketRecordStore.read', sql: READ_SQL },
  { method: 'SocketRecordStore.frameSeen', sql: FRAME_SEEN_SQL },
  { method: 'SocketRecordStore.openGap', sql: OPEN_GAP_SQL },
  { method: 'SocketRecordStore.openGapFromLastFrame', sql: OPEN_GAP_FROM_LAST_FRAME_SQL },
  { method: 'SocketRecordStore.endGap', sql: END_GAP_SQL },
  { method: 'SocketRecordStore.latestGaps', sql: LATEST_GAPS_SQL },
];

/**
 * The socket's record in PostgreSQL: the state row (holder, state, last frame, reconnects)
 * and the gaps. Only the holder of the lease writes; every process reads (the status route).
 * The unique index on open gaps keeps at most one open, whoever writes.
 */
@Injectable()
export class SocketRecordStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async read(): Promise<SocketRecord | null> {
    const [row] = await query<StateRow>(this.db, READ_SQL, []);
    if (!row) return null;
    return {
      holder: row.holder,
      state: row.state,
      connectedSince: row.connected_since,
      lastFrameAt: row.last_frame_at,
      reconnects: Number(row.reconnects),
    };
  }

  /** `holder` now tries to connect; `reconnect`: this replaces an earlier socket. */
  async connecting(holder: string, reconnect: boolean): Promise<void> {
    await query(this.db, UPSERT_STATE, [holder, 'connecting', null, reconnect ? 1 : 0]);
  }

  /** `holder`'s socket was acknowledged at `at`: it is connected, and a frame came then. */
  async connected(holder: string, at: Date): Promise<void> {
    await query(this.db, UPSERT_STATE, [holder, 'connected', at, 0]);
    await this.frameSeen(at);
  }

  /** The latest frame; written at most every few seconds by the holder (a gap starts there). */
  async frameSeen(at: Date): Promise<void> {
    await query(this.db, FRAME_SEEN_SQL, [at]);
  }

  /**
   * `holder`'s socket closed: a gap opens from `from`, unless one is open already or another
   * process holds an acknowledged socket. A holder that wakes (a pause, a stalled host) after
   * its lease ran out learns only then that its socket is gone; by then another process may
   * have taken over and connected, and nothing would ever end a gap opened beside its socket.
   * Checked in the statement, against the state the other holder wrote.
   */
  async openGap(from: Date, holder: string): Promise<'opened' | 'open already' | 'held'> {
    const [row] = await query<{ opened: boolean; held: boolean }>(this.db, OPEN_GAP_SQL, [
      from,
      holder,
    ]);
    return row.opened ? 'opened' : row.held ? 'held' : 'open already';
  }

  /**
   * A process took the socket over: a gap from the last frame recorded (its holder died, the
   * whole deployment stopped), unless one is open already or the service never connected.
   */
  async openGapFromLastFrame(): Promise<void> {
    await query(this.db, OPEN_GAP_FROM_LAST_FRAME_SQL, []);
  }

  /** A socket was acknowledged at `at`: the open gap, if any, ends there. */
  async endGap(at: Date): Promise<void> {
    await query(this.db, END_GAP_SQL, [at]);
  }

  /** The `limit` latest gaps, newest first. */
  async latestGaps(limit: number): Promise<SocketGap[]> {
    const rows = await query<GapRow>(this.db, LATEST_GAPS_SQL, [limit]);
    return rows.map((r) => ({
      from: r.started_at,
      until: r.ended_at,
      reconciliationId: r.reconciliation_id,
    }));
  }
}
