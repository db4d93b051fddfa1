// Signed deliveries the process tests send, made with @octokit/webhooks-methods.
import { sign } from '@octokit/webhooks-methods';

export const CODE_SECRET = 'process-code-secret';

/** A code/workflow_run.completed delivery: queued when QUEUE_PILOTS includes code. */
export async function queueWorkflowRun(baseUrl: string, delivery: string): Promise<Response> {
  const body = JSON.stringify({ action: 'completed', workflow_run: { id: delivery } });
  return fetch(`${baseUrl}/webhooks/code`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-code-event': 'workflow_run',
      'x-code-delivery': delivery,
      'x-hub-signature-256': await sign(CODE_SECRET, body),
    },
    body,
  });
}
