// Which agent `Error` codes are worth a new session (docs/protocols/agent.md section 11: an `Error` is fatal
// for the session, not necessarily for the call). Codes about the request itself (settings,
// credentials, a refused feature) will fail again the same way; anything else — the service's own
// trouble, a timeout, a code we have never seen — gets one more try with the conversation so far.

const FATAL_PATTERNS = [
  /SETTINGS/i,
  /INVALID/i,
  /UNAUTHORI[SZ]ED/i,
  /FORBIDDEN/i,
  /PAYMENT|BALANCE|QUOTA|INSUFFICIENT/i,
  /UNPARSABLE|MALFORMED|BAD_REQUEST/i,
  /UNSUPPORTED/i,
];

export function classifyAgentError(code: string): { retryable: boolean } {
  return { retryable: !FATAL_PATTERNS.some((pattern) => pattern.test(code)) };
}
