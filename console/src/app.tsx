import { useEffect, useMemo, useState } from 'preact/hooks';
import { Api } from './api';
import { DeliveryPage } from './pages/delivery';
import { EventTypesPage } from './pages/event-types';
import { InboundPage } from './pages/inbound';
import { FindEventPage } from './pages/find-event';
import { AccountsPage } from './pages/accounts';
import { AttendancePage } from './pages/attendance';
import { ReconciliationsPage } from './pages/reconciliations';
import { NewWebhookPage } from './pages/new-webhook';
import { SignInPage } from './pages/sign-in';
import { WebhookPage } from './pages/webhook';
import { WebhooksPage } from './pages/webhooks';
import { Route, href, parseRoute } from './routes';
import {
  Session,
  canManageAccounts,
  canReadAttendance,
  canSeeAccounts,
  canWrite,
  isAdmin,
  isExpired,
  loadSession,
  portalToken,
  saveSession,
  sessionFromToken,
} from './session';
import { PageTitle } from './ui';

/**
 * A portal link opens the console with its token in the fragment: it becomes this tab's
 * session and leaves the address bar (and so the history and any bookmark) at once.
 */
function takePortalToken(): { session: Session | null; notice: string | null } {
  const token = portalToken(location.hash);
  if (!token) return { session: null, notice: null };
  history.replaceState(null, '', `${location.pathname}${href({ page: 'webhooks' })}`);
  const session = sessionFromToken(token, true);
  if (!session || isExpired(session)) {
    return { session: null, notice: 'This portal link has expired; ask for a new one.' };
  }
  saveSession(sessionStorage, session);
  return { session, notice: null };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

export function App() {
  const [start] = useState(takePortalToken);
  const [session, setSession] = useState<Session | null>(
    () => start.session ?? loadSession(sessionStorage),
  );
  const [notice, setNotice] = useState<string | null>(start.notice);
  const route = useRoute();

  const signOut = (message: string | null) => {
    saveSession(sessionStorage, null);
    setSession(null);
    setNotice(message);
  };

  // The token's own expiry ends the session even while the page sits idle.
  useEffect(() => {
    if (!session) return () => undefined;
    const check = () => {
      if (isExpired(session)) {
        signOut(
          session.portal
            ? 'This portal link has expired; ask for a new one.'
            : 'Your session has expired; sign in again.',
        );
      }
    };
    check();
    const timer = setInterval(check, 1000);
    return () => clearInterval(timer);
  }, [session]);

  const api = useMemo(
    () =>
      session
        ? new Api({
            token: session.token,
            onUnauthorized: (problem) => signOut(`Signed out: ${problem.message}`),
          })
        : null,
    [session],
  );

  if (!session || !api) {
    return (
      <SignInPage
        notice={notice}
        onSignedIn={(next) => {
          saveSession(sessionStorage, next);
          setNotice(null);
          setSession(next);
        }}
      />
    );
  }

  const writable = canWrite(session);
  const admin = isAdmin(session);
  let page;
  switch (route.page) {
    case 'webhooks':
      page = <WebhooksPage api={api} writable={writable} />;
      break;
    case 'new-webhook':
      page = <NewWebhookPage api={api} writable={writable} />;
      break;
    case 'webhook':
      page = <WebhookPage key={route.id} api={api} id={route.id} writable={writable} />;
      break;
    case 'delivery':
      page = (
        <DeliveryPage
          key={route.deliveryId}
          api={api}
          webhookId={route.webhookId}
          deliveryId={route.deliveryId}
          writable={writable}
        />
      );
      break;
    case 'event-types':
      page = <EventTypesPage api={api} />;
      break;
    case 'inbound':
      page = <InboundPage api={api} />;
      break;
    case 'find-event':
      page = <FindEventPage key={route.query ?? ''} api={api} query={route.query} />;
      break;
    case 'reconciliations':
      page = admin ? (
        <ReconciliationsPage api={api} />
      ) : (
        <PageTitle>Reconciliation needs a client holding bridge:admin</PageTitle>
      );
      break;
    case 'attendance':
      page = canReadAttendance(session) ? (
        <AttendancePage key={route.uuid ?? ''} api={api} uuid={route.uuid} />
      ) : (
        <PageTitle>Attendance needs a client holding attendance:read</PageTitle>
      );
      break;
    case 'accounts':
      page = canSeeAccounts(session) ? (
        <AccountsPage api={api} canInstall={canManageAccounts(session)} />
      ) : (
        <PageTitle>
          Platform accounts need a client holding accounts:write or bridge:admin
        </PageTitle>
      );
      break;
    default:
      page = <PageTitle>Page not found</PageTitle>;
  }
  const current =
    route.page === 'new-webhook' || route.page === 'webhook' ? 'webhooks' : route.page;
  const link = (target: Route, label: string) => (
    <a href={href(target)} aria-current={current === target.page ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <>
      <a class="skip" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Event Bridge</span>
        <nav aria-label="Console">
          {link({ page: 'webhooks' }, 'Webhooks')}
          {link({ page: 'event-types' }, 'Event types')}
          {link({ page: 'find-event' }, 'Find event')}
          {canReadAttendance(session) && link({ page: 'attendance' }, 'Attendance')}
          {canSeeAccounts(session) && link({ page: 'accounts' }, 'Accounts')}
          {admin && link({ page: 'reconciliations' }, 'Reconciliation')}
          {admin && link({ page: 'inbound' }, 'Inbound')}
        </nav>
        <span class="who">
          {session.clientId}
          {session.portal ? ' (portal link)' : ''}
          {writable ? '' : ' · read-only'}
        </span>
        <button type="button" class="link-button" onClick={() => signOut(null)}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

/** The skip link must not change the fragment: the fragment is the page's address. */
function skipToMain(event: Event) {
  event.preventDefault();
  document.getElementById('main')?.focus();
}
