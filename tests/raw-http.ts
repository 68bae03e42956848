// Bytes written as given on a TCP connection of their own, for the tests that need what fetch will
// not send (hand-made framing, pipelined requests).
import { connect } from 'node:net';

/**
 * Writes `bytes` in one write on a new connection to `url`'s host and port and collects the answer
 * until the server closes the connection, or `done(text)` says the answer is complete (the client
 * then ends its side), or `timeoutMs` passes (`closed: false`). `statuses`: the status of each
 * HTTP/1.1 answer in `text`, in order.
 */
export function rawExchange(
  url: string,
  bytes: string,
  { done, timeoutMs = 10_000 }: { done?: (text: string) => boolean; timeoutMs?: number } = {},
): Promise<{ text: string; statuses: number[]; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const text = () => Buffer.concat(chunks).toString('utf8');
    const settle = (closed: boolean) => {
      const answer = text();
      resolve({ text: answer, statuses: statusesOf(answer), closed });
    };
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (done?.(text())) socket.end();
    });
    socket.on('close', () => settle(true));
    socket.on('error', reject);
    socket.setTimeout(timeoutMs, () => {
      socket.removeAllListeners('close');
      socket.destroy();
      settle(false);
    });
  });
}

/** The status of each HTTP/1.1 answer in `text`, in order. */
export function statusesOf(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}
