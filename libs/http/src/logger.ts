import { writeSync } from 'node:fs';
import { setImmediate } from 'node:timers';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
type Level = LogLevel;
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Whether a line of this level is written at all (callers skip building fields that would be dropped). */
  enabled?(level: LogLevel): boolean;
}

/**
 * Lines waiting for stdout. Every process writes one access-log line per request; one `write`
 * per line cost a system call (and a wake-up of whoever reads the pipe) per request, so lines
 * are gathered and written together once per event-loop turn. The buffer is bounded, an error
 * line goes out at once with everything before it, and what is left is written when the
 * process exits (process.exit, the end of the event loop, an uncaught error).
 */
let pending = '';
let scheduled = false;
/** Characters buffered before a write happens at once, whatever the turn. */
const MAX_PENDING = 64 * 1024;

/** Writes every buffered line now (in order, one write). */
export function flushLogs(): void {
  scheduled = false;
  if (pending === '') return;
  const text = pending;
  pending = '';
  writeAll(text);
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes to stdout synchronously, so that nothing is left in a runtime's queue when the process
 * exits. A full pipe (a reader that is behind) is waited for, as Node does for pipes.
 */
function writeAll(text: string): void {
  let bytes: Buffer | undefined;
  try {
    // The whole text at once, as a string (no copy): the common case.
    const written = writeSync(1, text);
    if (written === Buffer.byteLength(text)) return;
    bytes = Buffer.from(text).subarray(written);
  } catch (error) {
    if ((error as { code?: string }).code !== 'EAGAIN') return;
    bytes = Buffer.from(text);
  }
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(writeSync(1, bytes));
    } catch (error) {
      if ((error as { code?: string }).code !== 'EAGAIN') return;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

function enqueue(line: string, now: boolean): void {
  pending += line;
  if (now || pending.length >= MAX_PENDING) flushLogs();
  else if (!scheduled) {
    scheduled = true;
    setImmediate(flushLogs);
  }
}

process.on('exit', flushLogs);
// Deno runs 'unload' on Deno.exit and at the end of the event loop, but neither it nor 'exit'
// when an uncaught error ends the process: its 'error' and 'unhandledrejection' events come first.
if ((globalThis as { Deno?: unknown }).Deno)
  for (const event of ['unload', 'error', 'unhandledrejection']) globalThis.addEventListener(event, flushLogs);

/** A logger writing one JSON object per line to stdout, tagged with the service name. */
export function createLogger(service: string, minLevel: Level = 'info'): Logger {
  const write = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (order[level] < order[minLevel]) return;
    const line: Record<string, unknown> = { time: new Date().toISOString(), level, service, msg, ...fields };
    if (line.error instanceof Error) line.error = { message: line.error.message, stack: line.error.stack };
    enqueue(`${JSON.stringify(line)}\n`, level === 'error');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    enabled: (level) => order[level] >= order[minLevel],
  };
}
