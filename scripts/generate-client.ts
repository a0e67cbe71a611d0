import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { GENERATED_CLIENT, clientSource } from './client-source';

/**
 * `npm run client:generate [-- <service url>]`: regenerates the CLI's typed client from the
 * document a running service serves (default http://127.0.0.1:3000, as `npm start` runs it).
 * With `--check` it writes nothing and exits 1 when the checked-in client differs (CI).
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const url = (args.find((a) => !a.startsWith('--')) ?? 'http://127.0.0.1:3000').replace(
    /\/+$/,
    '',
  );
  const res = await fetch(`${url}/docs-json`).catch((error: Error) => {
    throw new Error(
      `cannot reach ${url}/docs-json (${error.message}): start the service first (npm start)`,
    );
  });
  if (res.status !== 200) throw new Error(`${url}/docs-json answered ${res.status}`);
  const target = resolve(__dirname, '..', GENERATED_CLIENT);
  const source = await clientSource((await res.json()) as Record<string, unknown>);
  if (check) {
    if (readFileSync(target, 'utf8') !== source) {
      throw new Error(
        `${GENERATED_CLIENT} differs from what ${url}/docs-json makes: run npm run client:generate and commit it`,
      );
    }
    process.stdout.write(`${GENERATED_CLIENT} matches ${url}/docs-json\n`);
    return;
  }
  writeFileSync(target, source);
  process.stdout.write(`wrote ${GENERATED_CLIENT} from ${url}/docs-json\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`client:generate: ${error.message}\n`);
  process.exit(1);
});
