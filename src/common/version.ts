// A module of its own so that code deep in the app (the delivery user-agent) can read the
// version without importing bootstrap.ts, which imports the whole app.
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const APP_VERSION: string = (require('../../package.json') as { version: string }).version;
