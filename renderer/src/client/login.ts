/**
 * The dashboard's password login (#63), for a page opened without the token in its link (on a LAN
 * address): whether the core offers it, and the token a right password is answered with.
 */
export async function loginAvailable(baseUrl = ''): Promise<boolean> {
  try {
    const r = await fetch(`${baseUrl}/login`);
    return r.ok && ((await r.json()) as { available?: boolean }).available === true;
  } catch {
    return false;
  }
}

export type LoginResult = { ok: true; token: string } | { ok: false; reason: 'wrong' | 'unreachable' };

export async function login(password: string, baseUrl = ''): Promise<LoginResult> {
  try {
    const r = await fetch(`${baseUrl}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password }),
    });
    if (r.status === 401) return { ok: false, reason: 'wrong' };
    if (!r.ok) return { ok: false, reason: 'unreachable' };
    return { ok: true, token: ((await r.json()) as { token: string }).token };
  } catch {
    return { ok: false, reason: 'unreachable' };
  }
}
