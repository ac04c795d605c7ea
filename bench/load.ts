// One autocannon run, in a child process of its own so that the load generator does not compete
// with the server for the server's event loop. Reads a LoadSpec (JSON) from argv[2] and prints a
// LoadResult (JSON) on stdout.
import autocannon from 'autocannon';
import { type LoadResult, loadSpec } from './measure.ts';

const spec = loadSpec.parse(JSON.parse(process.argv[2] ?? 'null'));
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: spec.url,
  method: spec.method,
  headers: spec.headers,
  body: spec.body,
  connections: spec.connections,
  duration: spec.seconds,
  // Slow answers are measured, not dropped: autocannon's default 10 s would turn them into errors.
  timeout: 60,
});
const cpu = process.cpuUsage(cpuBefore);
const statusCodes: Record<string, number> = {};
for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
const out: LoadResult = {
  requestsPerSecond: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  total: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  statusCodes,
  loadCpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(1, result.requests.total),
};
process.stdout.write(`${JSON.stringify(out)}\n`);
