// Waiting for something the stack does after its answer (an event relayed, a record flushed, a
// purge run, an object removed): read it again and again until it is there, and fail after a
// while naming what was awaited and what was last read. One loop for every test, so a wait
// always says what it waited for.

export interface PollOptions<T> {
  /** How long to keep reading: 10 s unless told (most of what is awaited takes about a second; the rest absorbs a loaded machine). */
  timeoutMs?: number;
  /** The pause between two reads: 100 ms unless told. */
  everyMs?: number;
  /** What of the last value the timeout error shows (the value itself unless told). */
  show?: (value: T) => unknown;
}

/** The longest a timeout error quotes the last value: a whole feed or log would drown the message. */
const SHOWN_CHARS = 2000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function quoted(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // A value JSON cannot write (a BigInt, a cycle) must not hide the timeout itself.
    text = String(value);
  }
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}… (${text.length} chars)` : text;
}

/**
 * Calls `read()` until `done(value)` holds and returns that value, pausing `everyMs` between
 * reads. Once `timeoutMs` has passed after a read that is not done, throws
 * `<what>: still <last value> after <timeoutMs> ms`; `what` names what was awaited.
 */
export async function pollUntil<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  options: PollOptions<T> = {},
): Promise<T> {
  const { timeoutMs = 10_000, everyMs = 100, show = (value: T) => value } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${quoted(show(value))} after ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** `pollUntil` for a yes-or-no question: resolves once `check()` answers true. */
export async function until(what: string, check: () => Promise<boolean>, options: PollOptions<boolean> = {}): Promise<void> {
  await pollUntil(what, check, (yes) => yes, options);
}
