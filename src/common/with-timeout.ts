/**
 * `promise`, or a rejection with `message` once `ms` have passed without it settling. The work
 * itself goes on (nothing here can cancel it); only the wait is bounded. The timer is cleared
 * either way, so a settled wait never keeps the process alive.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
