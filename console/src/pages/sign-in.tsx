import { useState } from 'preact/hooks';
import { Session, signIn } from '../session';
import { ErrorMessage, Field, PageTitle, useAction } from '../ui';

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
        <Field
          id="client-id"
          label="Client id"
          autoComplete="username"
          required
          value={clientId}
          onValue={setClientId}
        />
        <Field
          id="client-secret"
          label="Client secret"
          type="password"
          autoComplete="current-password"
          required
          value={secret}
          onValue={setSecret}
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
