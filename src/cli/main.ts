import { processOutput } from './output';
import { ProfileStore } from './profiles';
import { runCli } from './program';

/** `meb`: the CLI's process. Everything it reads from the environment is read here. */
async function main(): Promise<void> {
  const interrupted = new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  // eslint-disable-next-line no-restricted-properties -- the CLI's one read of its environment
  const store = ProfileStore.forUser(process.env.XDG_CONFIG_HOME);
  const code = await runCli(process.argv.slice(2), { store, output: processOutput, interrupted });
  process.exit(code);
}

void main();
