/**
 * Polls until `probe` returns a value other than undefined/false, or fails with the last
 * observation after the deadline. Tests wait for async work with this, never with sleeps.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 15000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}; last: ${String(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
