// The admin REST API (/admin/v1) with the credential the person signed in
// with. The credential stays in sessionStorage: it lasts as long as the
// tab, and no other tab or later visit sees it.

const storageKey = 'agents-mcp.credential';

export const credential = {
  get: () => sessionStorage.getItem(storageKey),
  set: (v) => sessionStorage.setItem(storageKey, v),
  clear: () => sessionStorage.removeItem(storageKey),
};

// ApiError carries the API's error body: {"error": {"code", "message"}}.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// api calls /admin/v1 + path. query: an object whose empty values are left
// out; body: a value sent as JSON. It returns the decoded JSON answer (null
// for an empty one) and throws ApiError for any non-2xx status.
export async function api(path, { method = 'GET', query, body, token } = {}) {
  const url = new URL('/admin/v1' + path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  const headers = { Accept: 'application/json' };
  const cred = token ?? credential.get();
  if (cred) headers.Authorization = 'Bearer ' + cred;
  const init = { method, headers, credentials: 'omit', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new ApiError(0, 'network', 'the server did not answer: ' + e.message);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const err = data && data.error;
    throw new ApiError(res.status, err?.code || 'http_' + res.status, err?.message || text.slice(0, 200) || res.statusText);
  }
  return data;
}

// readiness fetches /readyz with the signed-in credential: the checks'
// details, which include the vector index state, are shown only to a
// credential with admin:read when the server has credentials (without one,
// the body is the status alone). It answers 503 when a check fails, with the
// same body, so the status is not an error here.
export async function readiness() {
  const headers = {};
  const cred = credential.get();
  if (cred) headers.Authorization = 'Bearer ' + cred;
  const res = await fetch('/readyz', { headers, credentials: 'omit', cache: 'no-store' });
  try {
    return await res.json();
  } catch {
    return null;
  }
}
