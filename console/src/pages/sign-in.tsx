import { useState } from 'preact/hooks';
import { Session, signIn } from '../session';
import { ErrorMessage, PageTitle, useAction } from '../ui';

export function SignInPage({
  notice,
  onSignedIn,
}: {
  notice: string | null;
  onSignedIn: (session: Session) => void;
}) {
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    await action.run(async () => onSignedIn(await signIn(clientId.trim(), secret)));
  };
  return (
    <main id="main" class="sign-in">
      <PageTitle>Sign in to the Event Bridge console</PageTitle>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit}>
        <label for="client-id">Client id</label>
        <input
          id="client-id"
          autoComplete="username"
          required
          value={clientId}
          onInput={(e) => setClientId(e.currentTarget.value)}
        />
        <label for="client-secret">Client secret</label>
        <input
          id="client-secret"
          type="password"
          autoComplete="current-password"
          required
          value={secret}
          onInput={(e) => setSecret(e.currentTarget.value)}
        />
        <ErrorMessage error={action.error} />
        <button type="submit" disabled={action.busy}>
          Sign in
        </button>
      </form>
      <p class="hint">
        The API client's id and secret (AUTH_CLIENTS). The token stays in this tab only and is gone
        when you close it.
      </p>
    </main>
  );
}
