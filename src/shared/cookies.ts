// Cookies, read and written the same way on every host: the dashboard's session and CSRF nonce on the
// BASE_URL host (src/http/pages/session.ts) and the password gate's session on site hosts
// (src/serve/password-gate.ts). Parsing and the Set-Cookie value live here once (RFC 6265).

/** The value of cookie `name` in a Cookie header (RFC 6265 §5.4 `name=value; name2=value2`), if any. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const value of cookieValues(header, name)) return value;
  return undefined;
}

/** Every value of cookie `name` in a Cookie header, in the order sent (a name may repeat across domains). */
export function* cookieValues(header: string | undefined, name: string): Generator<string> {
  if (header === undefined) return;
  let at = 0;
  while (at < header.length) {
    const start = header.indexOf(name, at);
    if (start < 0) return;
    const end = start + name.length;
    const atBoundary =
      start === 0 || header.charCodeAt(start - 1) === 0x20 || header.charCodeAt(start - 1) === 0x3b;
    if (atBoundary && header.charCodeAt(end) === 0x3d /* = */) {
      const semi = header.indexOf(';', end);
      yield header.slice(end + 1, semi < 0 ? header.length : semi).trim();
      if (semi < 0) return;
      at = semi + 1;
    } else at = end;
  }
}

/**
 * The Set-Cookie value of a session cookie (RFC 6265 §4.1): no Domain attribute (host-only), Path=/,
 * HttpOnly, SameSite=Lax, Secure on https. A Max-Age of 0 removes the cookie.
 */
export function sessionCookie(name: string, value: string, maxAgeMs: number, secure: boolean): string {
  const maxAgeS = Math.floor(maxAgeMs / 1000);
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}${secure ? '; Secure' : ''}`;
}
