import { Api, seg } from '../api';
import { href } from '../routes';
import type { Page } from '../types';
import { ErrorMessage, PageTitle, TableBox, useLoad, when } from '../ui';

interface Session {
  join_time: string;
  leave_time: string;
  open?: true;
  join_missing?: true;
}

interface Participant {
  user_id: string | null;
  user_name: string | null;
  email: string | null;
  customer_key: string | null;
  sessions: Session[];
  first_join: string;
  last_leave: string;
  duration_seconds: number;
}

interface Summary {
  uuid: string;
  id: string | null;
  topic: string | null;
  end_time: string;
  participants_count: number;
  revision: number;
  computed_at: string;
}

interface Attendance extends Omit<Summary, 'end_time'> {
  start_time: string | null;
  end_time: string | null;
  duration_seconds: number | null;
  participants: Participant[];
}

const minutes = (seconds: number | null): string =>
  seconds === null ? '—' : `${Math.round(seconds / 60)} min`;

const time = (iso: string) => iso.slice(11, 19);

/** Computed attendance (docs/attendance.md): the latest occurrences, or one occurrence's participants. */
export function AttendancePage({ api, uuid }: { api: Api; uuid?: string }) {
  return uuid === undefined ? (
    <AttendanceList api={api} />
  ) : (
    <OneAttendance api={api} uuid={uuid} />
  );
}

function AttendanceList({ api }: { api: Api }) {
  const { data, error, loading } = useLoad(
    () => api.get<Page<Summary>>('/api/attendance', { limit: '50' }),
    [api],
  );
  return (
    <>
      <PageTitle>Attendance</PageTitle>
      <p>
        Who attended each meeting or webinar, computed once it ended and settled; a later
        participant event makes the next revision.
      </p>
      <ErrorMessage error={error} />
      {loading && !data && <p role="status">Loading…</p>}
      {data && data.data.length === 0 && <p>No attendance computed yet.</p>}
      {data && data.data.length > 0 && (
        <TableBox label="Meetings">
          <table>
            <thead>
              <tr>
                <th scope="col">Meeting</th>
                <th scope="col">Ended</th>
                <th scope="col">Participants</th>
                <th scope="col">Revision</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((a) => (
                <tr key={a.uuid}>
                  <td>
                    <a href={href({ page: 'attendance', uuid: a.uuid })}>{a.topic ?? a.uuid}</a>
                    <div class="hint">{a.uuid}</div>
                  </td>
                  <td>{when(a.end_time)}</td>
                  <td>{a.participants_count}</td>
                  <td>{a.revision}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </>
  );
}

function OneAttendance({ api, uuid }: { api: Api; uuid: string }) {
  const { data, error, loading } = useLoad(
    () => api.get<Attendance>(`/api/attendance/${seg(uuid)}`),
    [api, uuid],
  );
  return (
    <>
      <PageTitle>{data?.topic ?? 'Attendance'}</PageTitle>
      <p>
        <a href={href({ page: 'attendance' })}>All meetings</a>
      </p>
      <ErrorMessage error={error} />
      {loading && !data && <p role="status">Loading…</p>}
      {data && (
        <>
          <dl class="facts">
            <dt>Occurrence</dt>
            <dd>{data.uuid}</dd>
            <dt>Meeting id</dt>
            <dd>{data.id ?? '—'}</dd>
            <dt>Started</dt>
            <dd>{when(data.start_time)}</dd>
            <dt>Ended</dt>
            <dd>{when(data.end_time)}</dd>
            <dt>Duration</dt>
            <dd>{minutes(data.duration_seconds)}</dd>
            <dt>Participants</dt>
            <dd>{data.participants_count}</dd>
            <dt>Revision</dt>
            <dd>
              {data.revision} (computed {when(data.computed_at)})
            </dd>
          </dl>
          <TableBox label="Participants">
            <table>
              <thead>
                <tr>
                  <th scope="col">Participant</th>
                  <th scope="col">Email</th>
                  <th scope="col">Time in the meeting</th>
                  <th scope="col">Sessions (UTC)</th>
                </tr>
              </thead>
              <tbody>
                {data.participants.map((p, i) => (
                  <tr key={`${p.user_id ?? ''}-${i}`}>
                    <td>{p.user_name ?? p.user_id ?? '—'}</td>
                    <td>{p.email ?? '—'}</td>
                    <td>{minutes(p.duration_seconds)}</td>
                    <td>
                      {p.sessions.map((s) => (
                        <div key={s.join_time}>
                          {time(s.join_time)}–{time(s.leave_time)}
                          {s.open ? ' (no leave: until the end)' : ''}
                          {s.join_missing ? ' (no join: from the start)' : ''}
                        </div>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </>
      )}
    </>
  );
}
