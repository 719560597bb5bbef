// The fast path's request-head parser: what it accepts it must read exactly as node:http would; every
// other head returns null (the connection then goes to node:http, which answers or rejects it).

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, test } from 'node:test';
import { parseRequestHead } from '../../../src/serve/http1/request-head.js';
import { headerBlock } from '../../../src/serve/http1/response-head.js';

/** A head as the connection passes it: every line CRLF-terminated, without the final blank line. */
const head = (...lines: string[]) => lines.map((l) => `${l}\r\n`).join('');

describe('parseRequestHead accepts', () => {
  test('a plain GET and HEAD, reading the fields the site server uses', () => {
    const got = parseRequestHead(
      head(
        'GET /docs/a%20b.html?x=1 HTTP/1.1',
        'Host: demo.example.com:8080',
        'Accept-Encoding: br, gzip',
        'If-None-Match: "abc"',
        'If-Modified-Since: Sat, 21 Nov 2026 10:00:00 GMT',
        'Range: bytes=0-9',
        'If-Range: "abc"',
        'Cookie: a=1; b=2',
        'User-Agent: test',
      ),
    );
    assert.deepEqual(got, {
      method: 'GET',
      url: '/docs/a%20b.html?x=1',
      keepAlive: true,
      headers: {
        host: 'demo.example.com:8080',
        'accept-encoding': 'br, gzip',
        'if-none-match': '"abc"',
        'if-modified-since': 'Sat, 21 Nov 2026 10:00:00 GMT',
        range: 'bytes=0-9',
        'if-range': '"abc"',
        cookie: 'a=1; b=2',
        // Visitor analytics reads these (issue 25).
        'user-agent': 'test',
        referer: undefined,
        'x-forwarded-for': undefined,
      },
    });
    assert.equal(parseRequestHead(head('HEAD / HTTP/1.1', 'Host: x'))?.method, 'HEAD');
  });

  test('field names in any case, values trimmed of SP and HTAB, empty values', () => {
    const got = parseRequestHead(
      head('GET / HTTP/1.1', 'hOsT:   a.b  ', 'ACCEPT-ENCODING:\tgzip\t', 'Cookie:'),
    );
    assert.equal(got?.headers.host, 'a.b');
    assert.equal(got?.headers['accept-encoding'], 'gzip');
    assert.equal(got?.headers.cookie, '');
  });

  test('obs-text in values (as node:http does)', () => {
    assert.equal(parseRequestHead(head('GET / HTTP/1.1', 'Host: a', 'X-Name: caf\xe9'))?.url, '/');
  });

  test('keep-alive: HTTP/1.1 by default, HTTP/1.0 only when asked; Connection: close ends it', () => {
    assert.equal(parseRequestHead(head('GET / HTTP/1.1', 'Host: a'))?.keepAlive, true);
    assert.equal(parseRequestHead(head('GET / HTTP/1.1', 'Host: a', 'Connection: close'))?.keepAlive, false);
    assert.equal(parseRequestHead(head('GET / HTTP/1.1', 'Host: a', 'Connection: Close'))?.keepAlive, false);
    assert.equal(parseRequestHead(head('GET / HTTP/1.0'))?.keepAlive, false);
    assert.equal(parseRequestHead(head('GET / HTTP/1.0', 'Connection: keep-alive'))?.keepAlive, true);
  });
});

describe('parseRequestHead leaves to node:http', () => {
  const cases: Array<[string, string]> = [
    ['another method', head('POST / HTTP/1.1', 'Host: a')],
    ['a lowercase method', head('get / HTTP/1.1', 'Host: a')],
    ['OPTIONS *', head('OPTIONS * HTTP/1.1', 'Host: a')],
    ['an absolute-form target', head('GET http://a/ HTTP/1.1', 'Host: a')],
    ['HTTP/2.0', head('GET / HTTP/2.0', 'Host: a')],
    ['HTTP/1.2', head('GET / HTTP/1.2', 'Host: a')],
    ['HTTP/0.9 (no version)', head('GET /')],
    ['two spaces in the request line', head('GET  / HTTP/1.1', 'Host: a')],
    ['a space in the target', head('GET /a b HTTP/1.1', 'Host: a')],
    ['a NUL in the target', head('GET /a\0 HTTP/1.1', 'Host: a')],
    ['non-ASCII in the target', head('GET /caf\xe9 HTTP/1.1', 'Host: a')],
    ['HTTP/1.1 without Host', head('GET / HTTP/1.1', 'Accept: */*')],
    ['a repeated Host', head('GET / HTTP/1.1', 'Host: a', 'Host: b')],
    ['a repeated Cookie', head('GET / HTTP/1.1', 'Host: a', 'Cookie: a=1', 'Cookie: b=2')],
    ['a repeated Range', head('GET / HTTP/1.1', 'Host: a', 'Range: bytes=0-1', 'range: bytes=2-3')],
    ['Content-Length', head('GET / HTTP/1.1', 'Host: a', 'Content-Length: 0')],
    ['Transfer-Encoding', head('GET / HTTP/1.1', 'Host: a', 'Transfer-Encoding: chunked')],
    ['Expect', head('GET / HTTP/1.1', 'Host: a', 'Expect: 100-continue')],
    ['Upgrade', head('GET / HTTP/1.1', 'Host: a', 'Upgrade: websocket', 'Connection: Upgrade')],
    ['Connection: upgrade alone', head('GET / HTTP/1.1', 'Host: a', 'Connection: upgrade')],
    ['a space before the colon', head('GET / HTTP/1.1', 'Host : a')],
    ['obs-fold', head('GET / HTTP/1.1', 'Host: a', 'X-A: 1', ' continued')],
    ['a line without a colon', head('GET / HTTP/1.1', 'Host: a', 'junk')],
    ['an empty field name', head('GET / HTTP/1.1', 'Host: a', ': v')],
    ['a bare LF inside a line', 'GET / HTTP/1.1\r\nHost: a\nX-B: 1\r\n'],
    ['a bare CR inside a value', head('GET / HTTP/1.1', 'Host: a\rX-B: 1')],
    ['a NUL in a value', head('GET / HTTP/1.1', 'Host: a', 'X-A: \0')],
    ['another control character in a value', head('GET / HTTP/1.1', 'Host: a', 'X-A: \x7f')],
    ['a bad character in a field name', head('GET / HTTP/1.1', 'Host: a', 'X(A): 1')],
    ['a leading empty line', head('', 'GET / HTTP/1.1', 'Host: a')],
  ];
  for (const [name, text] of cases) {
    test(name, () => assert.equal(parseRequestHead(text), null));
  }
});

describe('headerBlock', () => {
  test('serializes once per object and reports Content-Length', () => {
    const headers = { 'Content-Type': 'text/plain', 'Content-Length': '3', 'Set-Cookie': ['a=1', 'b=2'] };
    const block = headerBlock(headers);
    assert.equal(
      block.text,
      'Content-Type: text/plain\r\nContent-Length: 3\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n',
    );
    assert.equal(block.hasLength, true);
    assert.equal(headerBlock(headers), block);
    assert.equal(headerBlock({ Location: '/x' }).hasLength, false);
  });

  test('refuses what node:http refuses, and connection fields the connection owns', () => {
    assert.throws(() => headerBlock({ 'X-A': 'a\r\nInjected: 1' }), TypeError);
    assert.throws(() => headerBlock({ 'X-A': 'a\nb' }), TypeError);
    assert.throws(() => headerBlock({ 'Bad Name': 'v' }), TypeError);
    assert.throws(() => headerBlock({ Connection: 'close' }), TypeError);
    assert.throws(() => headerBlock({ 'Transfer-Encoding': 'chunked' }), TypeError);
  });
});

describe('parseRequestHead agrees with node:http', () => {
  // Random heads from valid and odd pieces. Whatever the fast path accepts, node:http's parser must accept
  // too and read the same way; what node:http rejects, the fast path must not answer.
  const pick = <T>(xs: readonly T[], r: () => number): T => xs[Math.floor(r() * xs.length)]!;
  const targets = [
    '/',
    '/a',
    '/a%20b',
    '/a?x=1&y',
    "/~!$&'()*+,;=:@",
    '/\\..\\',
    '/%2e%2e/',
    '//etc',
    '/a#b',
  ];
  const hosts = ['a.localhost', 'A.LocalHost:8080', '[::1]:80', 'x', 'a b', 'caf\xe9.test'];
  const names = ['X-A', "x!#$%&'*+-.^_`|~z", 'Accept-Encoding', 'If-None-Match', 'Range', 'Cookie', 'X_B'];
  const values = [
    '1',
    ' padded ',
    '\tq=0.5\t',
    'a\tb',
    'caf\xe9',
    '',
    '"etag"',
    'bytes=0-1',
    'a\x7fb',
    'a\x01b',
  ];

  function randomHead(r: () => number): string {
    let head = `${pick(['GET', 'HEAD'], r)} ${pick(targets, r)} HTTP/1.${pick(['1', '1', '0'], r)}\r\n`;
    if (r() < 0.9) head += `Host: ${pick(hosts, r)}\r\n`;
    const count = Math.floor(r() * 4);
    for (let i = 0; i < count; i++) head += `${pick(names, r)}:${pick(values, r)}\r\n`;
    return head;
  }

  test('on 400 random heads', async () => {
    let seed = 12345;
    const r = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const seen: Array<{ method?: string; url?: string; headers: Record<string, unknown> }> = [];
    const server = createServer((req, res) => {
      seen.push({ method: req.method, url: req.url, headers: req.headers });
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    let accepted = 0;
    try {
      for (let i = 0; i < 400; i++) {
        const head = randomHead(r);
        const ours = parseRequestHead(head);
        if (ours === null) continue;
        accepted++;
        const before = seen.length;
        const status = await sendRaw(port, `${head}Connection: close\r\n\r\n`);
        assert.equal(status, 200, `node:http refused a head the fast path accepts: ${JSON.stringify(head)}`);
        const node = seen[before]!;
        assert.equal(node.method, ours.method, JSON.stringify(head));
        assert.equal(node.url, ours.url, JSON.stringify(head));
        for (const [name, value] of Object.entries(ours.headers)) {
          assert.equal(node.headers[name], value, `${name} of ${JSON.stringify(head)}`);
        }
      }
    } finally {
      server.close();
    }
    assert.ok(accepted > 100, `only ${accepted} heads accepted: the generator needs more valid pieces`);
  });
});

/** Sends raw bytes and resolves with the response's status code. */
function sendRaw(port: number, bytes: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      got += d;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(got.split(' ', 2)[1] ?? 0)));
    socket.end(Buffer.from(bytes, 'latin1'));
  });
}
