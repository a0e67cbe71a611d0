import { cliConfigHomeFromProcess } from '../config/load-config';
import { processOutput } from './output';
import { ProfileStore } from './profiles';
import { runCli } from './program';

/** `meb`: the CLI's process; its one setting from the environment comes from src/config. */
async function main(): Promise<void> {
  const interrupted = new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  const store = ProfileStore.forUser(cliConfigHomeFromProcess());
  const code = await runCli(process.argv.slice(2), { store, output: processOutput, interrupted });
  process.exit(code);
}

void main();
