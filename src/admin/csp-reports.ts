// Where browsers report what the console's Content-Security-Policy blocked (docs/security.md,
// "The console's policy"): the policy's `report-uri` posts a `{"csp-report": {…}}` body
// (application/csp-report) here, at once, in every browser. The policy names no `report-to`: with
// one, Chromium ignores `report-uri` and sends its Reporting API batches up to a minute late; the
// route takes that format too (an array of reports, application/reports+json).
// Each violation counts in callbridge_csp_violations_total by its directive: a console that never
// breaks its policy reads 0, so any other figure is an injected script or style, or a bug.
//   POST /console/csp-reports → 204
import type { FastifyInstance } from 'fastify';
import type { Counter } from 'prom-client';

export const CSP_REPORT_PATH = '/console/csp-reports';
/** The policy's reporting directive. */
export const CSP_REPORTING = `report-uri ${CSP_REPORT_PATH}`;

const REPORT_BODY_LIMIT_BYTES = 64 * 1024;
/** Directives counted by name; anything else a browser names counts as `other` (bounded labels). */
export const CSP_DIRECTIVES = [
  'default-src',
  'script-src',
  'script-src-elem',
  'script-src-attr',
  'style-src',
  'style-src-elem',
  'style-src-attr',
  'connect-src',
  'img-src',
  'media-src',
  'font-src',
  'object-src',
  'base-uri',
  'form-action',
  'frame-ancestors',
  'frame-src',
  'worker-src',
] as const;

function directiveOf(report: Record<string, unknown>): string {
  const named = report['effective-directive'] ?? report.effectiveDirective ?? report['violated-directive'];
  const directive = typeof named === 'string' ? named.trim().split(/\s+/)[0]!.toLowerCase() : '';
  return (CSP_DIRECTIVES as readonly string[]).includes(directive) ? directive : 'other';
}

/** The violations a report body holds, in either format; nothing for anything else. */
function violationsOf(body: unknown): Array<Record<string, unknown>> {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (isObject(body) && isObject(body['csp-report'])) return [body['csp-report']];
  if (!Array.isArray(body)) return [];
  return body
    .slice(0, 100)
    .filter((report) => isObject(report) && report.type === 'csp-violation' && isObject(report.body))
    .map((report) => (report as { body: Record<string, unknown> }).body);
}

export function registerCspReportRoute(scope: FastifyInstance, violations: Counter<'directive'>): void {
  // Series for every directive from the start, so a dashboard reads 0 rather than nothing.
  for (const directive of [...CSP_DIRECTIVES, 'other']) violations.inc({ directive }, 0);
  const asJson = (_req: unknown, body: string, done: (err: Error | null, value?: unknown) => void) => {
    try {
      done(null, JSON.parse(body));
    } catch {
      done(null, null);
    }
  };
  for (const type of ['application/csp-report', 'application/reports+json']) {
    scope.addContentTypeParser(type, { parseAs: 'string', bodyLimit: REPORT_BODY_LIMIT_BYTES }, asJson);
  }
  scope.post(CSP_REPORT_PATH, { bodyLimit: REPORT_BODY_LIMIT_BYTES }, async (req, reply) => {
    const reports = violationsOf(req.body);
    for (const report of reports) violations.inc({ directive: directiveOf(report) });
    if (reports.length > 0) {
      // What was blocked is named by its origin only: a report's URLs may carry a page's query.
      const blocked = reports[0]!['blocked-uri'] ?? reports[0]!.blockedURL;
      const origin = typeof blocked === 'string' && URL.canParse(blocked) ? new URL(blocked).origin : blocked;
      req.log.warn(
        {
          directive: directiveOf(reports[0]!),
          blocked: typeof origin === 'string' ? origin.slice(0, 200) : null,
        },
        'the console reported a Content-Security-Policy violation',
      );
    }
    return reply.code(204).send();
  });
}
