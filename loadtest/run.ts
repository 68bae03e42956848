// `npm run loadtest [-- <scenario>…]`: runs the k6 scenarios (smoke, crud-mix, rate-limit, spike,
// soak; default all) against the running stack (GATEWAY_URL + ADMIN_TOKEN) or a stack of its own,
// with fresh tenants per scenario, then prints one table. Exit code 1 when any scenario failed.
// Knobs (env): DURATION, VUS (crud-mix), PEAK_RPS, HOLD (spike), SOAK_DURATION, RPS (soak).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startReceiver } from '@crm/testing';
import { k6Binary, resultsDir, stamp } from './lib/k6.ts';
import { passed, printTable } from './lib/report.ts';
import { runScenario, type ScenarioName, scenarioNames } from './lib/scenarios.ts';
import { acquireTarget } from './lib/target.ts';

const log = (m: string) => console.log(`[loadtest] ${m}`);
const requested = process.argv.slice(2).filter((a) => a !== 'all');
const unknown = requested.filter((s) => !scenarioNames.includes(s as ScenarioName));
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; choose from ${scenarioNames.join(', ')} or all`);
  process.exit(2);
}
const selected = (requested.length > 0 ? requested : [...scenarioNames]) as ScenarioName[];

k6Binary();
const receiver = await startReceiver({ reply: () => ({ status: 204 }) });
const target = await acquireTarget(log);
let interrupted = false;
process.once('SIGINT', () => {
  interrupted = true;
});

const runs = [];
try {
  for (const scenario of selected) {
    if (interrupted) break;
    log(`running ${scenario}…`);
    runs.push(await runScenario(target, scenario, { env: { WEBHOOK_TARGET: receiver.url } }));
  }
} finally {
  await receiver.close();
  if (target.owned) {
    log('stopping the stack…');
    await target.stop();
  }
}

const lines: string[] = [];
printTable(runs, (line) => {
  console.log(line);
  lines.push(line);
});
writeFileSync(join(resultsDir, `loadtest-${stamp()}.txt`), `${lines.join('\n')}\n`);
process.exit(runs.length === selected.length && runs.every(passed) ? 0 : 1);
