// The admin API as the campaign commands use it: bearer token, a timeout on every request, and the
// server's `{"error": {"code", "message"}}` turned into one readable line.

export class AdminApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'AdminApiError';
  }
}

const REQUEST_TIMEOUT_MS = 30_000;

export interface AdminClient {
  json<T>(method: string, path: string, body?: unknown): Promise<T>;
  csv<T>(path: string, text: string): Promise<T>;
  text(path: string): Promise<string>;
}

export function adminClient(server: string, token: string): AdminClient {
  const base = server.replace(/\/+$/, '');

  async function send(method: string, path: string, body?: string, type?: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (type) headers['content-type'] = type;
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      const { cause } = err as { cause?: { code?: string; message?: string } };
      const why = cause?.code ?? cause?.message ?? (err as Error).name;
      throw new AdminApiError(
        `cannot reach the server at ${base} (${why}); is it running (npm start)?`,
        null,
        null,
      );
    }
    if (response.ok) return response;
    const text = await response.text();
    let message = `the server answered ${response.status}`;
    let code: string | null = null;
    try {
      const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
      if (parsed.error?.message) message = parsed.error.message;
      code = parsed.error?.code ?? null;
    } catch {
      // Not our JSON (a proxy's page, say): the status says enough.
    }
    if (response.status === 401) {
      message = `${message} (the token came from ADMIN_TOKEN or $DATA_DIR/admin-token: is it this server's?)`;
    }
    throw new AdminApiError(message, response.status, code);
  }

  return {
    async json<T>(method: string, path: string, body?: unknown) {
      const response = await send(
        method,
        path,
        body === undefined ? undefined : JSON.stringify(body),
        body === undefined ? undefined : 'application/json',
      );
      return (await response.json()) as T;
    },
    async csv<T>(path: string, text: string) {
      return (await (await send('POST', path, text, 'text/csv')).json()) as T;
    },
    async text(path: string) {
      return (await send('GET', path)).text();
    },
  };
}
