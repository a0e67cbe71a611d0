import { Api } from '../api';
import { InboundStatusPanel } from '../inbound-status';
import { PageTitle } from '../ui';

/** "Inbound": how the platform's events reach the service (bridge:admin). */
export function InboundPage({ api }: { api: Api }) {
  return (
    <>
      <PageTitle>Inbound</PageTitle>
      <InboundStatusPanel api={api} />
    </>
  );
}
