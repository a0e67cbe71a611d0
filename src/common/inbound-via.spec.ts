import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';
import { INBOUND_VIAS, VIA } from './inbound-via';

const MIGRATIONS = join(__dirname, '..', 'database', 'migrations');
const CHECK = /CONSTRAINT inbound_events_via_ck CHECK \(via IN \(([^)]*)\)\)/g;

/** The vias of the latest inbound_events_via_ck the migrations create, in their order. */
function migratedVias(): string[] {
  const files = readdirSync(MIGRATIONS)
    .filter((f) => /^\d+-.*\.ts$/.test(f))
    .sort();
  let latest: string | undefined;
  for (const file of files) {
    for (const match of readFileSync(join(MIGRATIONS, file), 'utf8').matchAll(CHECK)) {
      latest = match[1];
    }
  }
  if (latest === undefined) throw new Error('no migration creates inbound_events_via_ck');
  return latest.split(',').map((v) => v.trim().replace(/^'|'$/g, ''));
}

describe('the ways in (INBOUND_VIAS)', () => {
  // The migrations are frozen: a way in added to the list needs a migration that widens the
  // check, or rows of the new way in are refused.
  it('are the vias the migrations let inbound_events hold', () => {
    expect(migratedVias()).toEqual([...INBOUND_VIAS]);
  });

  it('are each their own name in VIA', () => {
    expect(Object.values(VIA)).toEqual([...INBOUND_VIAS]);
    for (const via of INBOUND_VIAS) expect(VIA[via]).toBe(via);
  });
});
