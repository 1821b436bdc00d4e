/** One JSON POST to the service under test; the body is read whole. */
export async function postJson(baseUrl: string, path: string, body: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const res = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** The benchmark measured nothing useful if the service refused the request: stop loudly. */
export function expectStatus(what: string, got: { status: number; text: string }, status = 200): void {
  if (got.status !== status) throw new Error(`${what}: expected HTTP ${status}, got ${got.status}: ${got.text.slice(0, 300)}`);
}
