// `npx bun loadtest/upload-memory.ts`: peak memory of the gateway and documents processes while
// UPLOADS (default 10) files of 20 MiB each are uploaded at once through the gateway into MinIO.
// Starts a stack of its own, samples VmRSS of both processes every 20 ms from /proc/<pid>/status
// and reads VmHWM (the kernel's peak RSS) before and after. Bounded streaming means the peak grows
// by a multiple of one 5 MiB S3 part per upload, not by the bytes sent: ROUNDS (default 3) rounds
// of UPLOADS at once show whether the peak keeps growing (it would if files were held).
import { readFileSync } from 'node:fs';
import { startStack } from '@crm/testing';

const UPLOADS = Number(process.env.UPLOADS ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const FILE_BYTES = Number(process.env.FILE_BYTES ?? 20 * 1024 * 1024);
const MiB = 1024 * 1024;
/** Issue 18: ten parallel 20 MiB uploads grow the documents process by less than this. */
const TARGET_GROWTH = 150 * MiB;
const log = (m: string) => console.log(`[upload-memory] ${m}`);

function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

const fmt = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/** CPU time (user + system) a process has used, in ms: robust to other load, unlike wall time. */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

log('starting a stack…');
const stack = await startStack();
try {
  const tenant = await stack.createTenant();
  const contact = await tenant.request('POST', '/v1/contacts', { body: { name: 'Upload memory', type: 'client' } });
  if (contact.status !== 201) throw new Error(`contact creation failed: ${contact.status} ${contact.text}`);
  const contactId = contact.body.data.id as number;
  const pids = { gateway: stack.processes.gateway.child.pid as number, documents: stack.processes.documents.child.pid as number };

  // Warm up both processes (JIT, connection pools, S3 client) with one small upload.
  const warm = new FormData();
  warm.set('file', new Blob(['warm up\n']), 'warm.txt');
  await tenant.request('POST', `/v1/contacts/${contactId}/documents`, { raw: warm });

  const content = new Uint8Array(FILE_BYTES).fill(0x61);
  const initial = { gateway: memoryOf(pids.gateway), documents: memoryOf(pids.documents) };
  log(`before: gateway RSS ${fmt(initial.gateway.rss)}, documents RSS ${fmt(initial.documents.rss)}`);
  let failed = false;
  let worstGrowth = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const peak = { gateway: 0, documents: 0 };
    const sampler = setInterval(() => {
      for (const name of ['gateway', 'documents'] as const) peak[name] = Math.max(peak[name], memoryOf(pids[name]).rss);
    }, 20);
    const started = performance.now();
    const cpuBefore = cpuMsOf(pids.documents);
    const statuses = await Promise.all(
      Array.from({ length: UPLOADS }, async (_, i) => {
        const form = new FormData();
        form.set('file', new Blob([content]), `big-${round}-${i}.txt`);
        const response = await tenant.request('POST', `/v1/contacts/${contactId}/documents`, { raw: form });
        if (response.status !== 201) log(`upload ${i} of round ${round}: ${response.status} ${response.text.slice(0, 300)}`);
        return response.status;
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpuMs = cpuMsOf(pids.documents) - cpuBefore;
    clearInterval(sampler);
    failed ||= statuses.some((s) => s !== 201);
    worstGrowth = Math.max(worstGrowth, peak.documents - initial.documents.rss);
    log(
      `round ${round}: ${UPLOADS} × ${fmt(FILE_BYTES)} at once → ${statuses.filter((s) => s === 201).length} × 201 in ${seconds.toFixed(1)} s; ` +
        `peak RSS gateway ${fmt(peak.gateway)} (+${fmt(peak.gateway - initial.gateway.rss)}), documents ${fmt(peak.documents)} (+${fmt(peak.documents - initial.documents.rss)}); documents CPU ${cpuMs} ms (${(cpuMs / UPLOADS).toFixed(0)} ms per upload)`,
    );
  }
  const after = { gateway: memoryOf(pids.gateway), documents: memoryOf(pids.documents) };
  log(`VmHWM after all rounds: gateway ${fmt(after.gateway.hwm)}, documents ${fmt(after.documents.hwm)}`);
  const ok = worstGrowth < TARGET_GROWTH;
  log(`${ok ? 'ok  ' : 'MISS'} documents RSS growth, worst round: +${fmt(worstGrowth)} (target < ${fmt(TARGET_GROWTH)})`);
  if (failed) process.exitCode = 1;
} finally {
  await stack.stop();
}
