// The console's Content-Security-Policy violations as browsers report them (admin/csp-reports.ts).
import { Counter, type Registry } from 'prom-client';

export function consoleMetrics(r: Registry[]) {
  return {
    cspViolations: new Counter({
      name: 'callbridge_csp_violations_total',
      help: "Content-Security-Policy violations the console's browsers reported, by directive.",
      labelNames: ['directive'],
      registers: r,
    }),
  };
}
