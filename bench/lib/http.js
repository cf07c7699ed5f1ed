/** Small JSON client over fetch, for setting up users and keys before a load run. */
export async function call(baseUrl, method, path, { body, headers = {} } = {}) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: response.status, body: json, headers: response.headers };
}

async function expectStatus(promise, status, what) {
  const response = await promise;
  if (response.status !== status)
    throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

let counter = 0;

/** Registers a user and signs them in: `{email, password, access, refresh, auth}`. */
export async function signUp(baseUrl, email = `bench${++counter}-${Date.now()}@example.com`) {
  const password = 'bench password 1';
  await expectStatus(call(baseUrl, 'POST', '/auth/users/', { body: { email, password } }), 201, 'sign-up');
  return { ...(await signIn(baseUrl, email, password)), email, password };
}

export async function signIn(baseUrl, email, password) {
  const tokens = await expectStatus(
    call(baseUrl, 'POST', '/auth/jwt/create/', { body: { email, password } }),
    200,
    'sign-in',
  );
  return { ...tokens, auth: { Authorization: `Bearer ${tokens.access}` } };
}

/** Creates an API key for a signed-in user: the record including `key`. */
export function createKey(baseUrl, user, name = 'bench key') {
  return expectStatus(
    call(baseUrl, 'POST', '/v1/billings/api-keys/', { body: { name }, headers: user.auth }),
    201,
    'create key',
  );
}
