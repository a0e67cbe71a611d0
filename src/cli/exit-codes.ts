/**
 * The CLI's exit codes (docs/cli.md lists them): scripts can tell "log in again" from "no such
 * webhook" from "the service is down" without reading the message.
 */
export const EXIT = {
  ok: 0,
  /** Anything not below: a bug, an answer the CLI did not expect. */
  failed: 1,
  /** Bad command line: unknown command or option, missing argument, bad value. */
  usage: 2,
  /** Not logged in, token expired, or the credentials were refused (401). */
  unauthenticated: 3,
  /** The token lacks the scope the command needs (403). */
  forbidden: 4,
  /** No such webhook, delivery or event, or not the caller's (404). */
  notFound: 5,
  /** The service refused the request (400, 409, 413, 422, 429, …): the message says why. */
  refused: 6,
  /** The service could not be reached, or answered 5xx. */
  unavailable: 7,
  /** A wait ran out (`deliveries tail --timeout`) before what it waited for came. */
  timedOut: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one line, exiting with `code`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: ExitCode,
  ) {
    super(message);
  }
}

/** The exit code for an HTTP status the service answered with. */
export function exitCodeOf(status: number): ExitCode {
  if (status === 401) return EXIT.unauthenticated;
  if (status === 403) return EXIT.forbidden;
  if (status === 404) return EXIT.notFound;
  if (status >= 400 && status < 500) return EXIT.refused;
  if (status >= 500) return EXIT.unavailable;
  return EXIT.failed;
}
