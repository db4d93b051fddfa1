// A request to a server's `/v1` API with a bearer token, as an operator's script sends it: a GET
// without a body, a POST with one (a string as it is, anything else as JSON).
export function adminRequest(
  baseUrl: string,
  token: string,
  path: string,
  body?: unknown,
  type = 'application/json',
): Promise<Response> {
  return fetch(`${baseUrl}/v1${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}
