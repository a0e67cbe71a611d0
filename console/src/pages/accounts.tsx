import { useState } from 'preact/hooks';
import { Api, seg } from '../api';
import type { Page } from '../types';
import { ErrorMessage, PageTitle, StatusBadge, TableBox, useAction, useLoad, when } from '../ui';

interface Account {
  account_id: string;
  status: 'active' | 'needs_reinstall' | 'revoked';
  installed_by: string;
  installed_at: string;
  scopes: string;
}

interface Install {
  install_url: string;
  expires_at: string;
}

/**
 * Installed platform accounts (docs/accounts.md): those this client holds (every one for
 * bridge:admin) with their status; with accounts:write, start an install and remove one.
 */
export function AccountsPage({ api, canInstall }: { api: Api; canInstall: boolean }) {
  const { data, error, loading, reload } = useLoad(
    () => api.get<Page<Account>>('/api/platform/accounts'),
    [api],
  );
  const [install, setInstall] = useState<Install | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const action = useAction();

  const start = () =>
    action.run(async () => {
      setMessage(null);
      setInstall(await api.post<Install>('/api/platform/installs'));
    });

  const remove = (accountId: string) =>
    action.run(async () => {
      // Removing revokes the account's tokens at the platform and deletes its stored events.
      if (!confirm(`Remove platform account ${accountId}? Its stored events are deleted.`)) return;
      await api.delete(`/api/platform/accounts/${seg(accountId)}`);
      setMessage(`Platform account ${accountId} removed.`);
      await reload();
    });

  return (
    <>
      <PageTitle>Platform accounts</PageTitle>
      <p>
        Accounts that installed the platform app. Each account's events reach only the clients that
        hold it.
      </p>
      {canInstall && (
        <p>
          <button type="button" disabled={action.busy} onClick={() => void start()}>
            Install an account
          </button>
        </p>
      )}
      {install && (
        <p role="status">
          Open <a href={install.install_url}>the platform's install page</a> as the account's
          administrator, before {when(install.expires_at)}; the link works once.
        </p>
      )}
      {message && <p role="status">{message}</p>}
      <ErrorMessage error={action.error ?? error} />
      {loading && !data && <p role="status">Loading…</p>}
      {data && data.data.length === 0 && <p>No platform account installed yet.</p>}
      {data && data.data.length > 0 && (
        <TableBox label="Platform accounts">
          <table>
            <caption>Platform accounts</caption>
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Status</th>
                <th scope="col">Installed by</th>
                <th scope="col">Installed</th>
                {canInstall && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {data.data.map((a) => (
                <tr key={a.account_id}>
                  <td>
                    {a.account_id}
                    <div class="hint">{a.scopes}</div>
                  </td>
                  <td>
                    <StatusBadge status={a.status} />
                  </td>
                  <td>{a.installed_by}</td>
                  <td>{when(a.installed_at)}</td>
                  {canInstall && (
                    <td>
                      {a.status !== 'revoked' && (
                        <button
                          type="button"
                          disabled={action.busy}
                          aria-label={`Remove ${a.account_id}`}
                          onClick={() => void remove(a.account_id)}
                        >
                          Remove
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </>
  );
}
