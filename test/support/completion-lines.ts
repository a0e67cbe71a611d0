/** A request's completion line as the service writes it (src/telemetry/request-record.ts). */
export type CompletionLineJson = Record<string, unknown> & {
  req: Record<string, unknown>;
  res: { statusCode: number; headers: Record<string, unknown> };
  err?: { type: string; message: string };
};

/**
 * What two stacks serving the same answer must write alike in its completion line: what
 * differs from one request to the next (its id, port, time, the headers of the body as sent)
 * is left out, and only the presence of the values that vary is kept.
 */
export function comparableLine(line: CompletionLineJson): Record<string, unknown> {
  const { req, res, err, time, pid, hostname, responseTime, ...rest } = line;
  return {
    fields: Object.keys(line).sort(),
    ...rest,
    req: { ...req, id: typeof req.id, headers: undefined, remotePort: undefined },
    res: { statusCode: res.statusCode, type: res.headers['content-type'] },
    responseTime: typeof responseTime,
    err: err && { type: err.type, message: err.message },
    written: [typeof time, typeof pid, typeof hostname],
  };
}
