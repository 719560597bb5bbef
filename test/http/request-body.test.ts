// Request bodies on every route arrive under the pace rule (issue 19 item 6, the same hole as uploads):
// a trickled JSON body is cut with 408 and the error body, and a body the answer left unread (an early
// refusal) is drained under the same rule instead of holding the connection as long as the client likes.

import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';

const STALL_MS = 2000;

/** A raw connection: what the server sent so far, and whether it closed the connection. */
function open(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let received = '';
  let closedAt: number | null = null;
  socket.on('data', (c: Buffer) => {
    received += c.toString('latin1');
  });
  socket.on('close', () => {
    closedAt = Date.now();
  });
  return {
    socket,
    received: () => received,
    closedAt: () => closedAt,
  };
}

/** Polls until `check` holds or `ms` pass; returns whether it held. */
async function within(ms: number, check: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

describe('request bodies under the pace rule', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({}, { bodyPace: { stallMs: STALL_MS, minBytesPerS: 1024 } });
  });
  after(() => t.close());

  test('a JSON body trickling 1 byte every 0.5 s is answered 408 with the error body and the connection closed', async () => {
    const conn = open(t.port);
    const body = JSON.stringify({ files: [{ path: 'index.html', size: 1, contentType: 'text/html' }] });
    conn.socket.write(
      `POST /api/v1/publish HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n`,
    );
    let sent = 0;
    const started = Date.now();
    const trickle = setInterval(() => conn.socket.write(body.slice(sent, ++sent)), 500);
    try {
      assert.ok(
        await within(STALL_MS + 3000, () => conn.closedAt() !== null),
        'the server closed the connection',
      );
      const elapsed = conn.closedAt()! - started;
      assert.ok(elapsed < STALL_MS + 2000, `closed after ${elapsed} ms`);
      const [head, text] = conn.received().split('\r\n\r\n');
      assert.match(head!, /^HTTP\/1\.1 408 /);
      assert.match(head!, /\r\nconnection: close/i);
      assert.deepEqual(
        { code: JSON.parse(text!).code, status: JSON.parse(text!).status },
        { code: 'INVALID_REQUEST', status: 408 },
      );
    } finally {
      clearInterval(trickle);
      conn.socket.destroy();
    }
  });

  test('a body left unread by an early refusal, then trickled, loses its connection within the bound', async () => {
    const conn = open(t.port);
    // 404 before any body is read; the client goes on sending 1 byte every 0.5 s on a keep-alive connection.
    conn.socket.write(
      'PUT /api/v1/nothing-here HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n' +
        'Content-Length: 100000\r\n\r\nx',
    );
    const trickle = setInterval(() => conn.socket.write('x'), 500);
    try {
      assert.ok(await within(2000, () => conn.received().includes('\r\n\r\n')), 'answered at once');
      assert.match(conn.received(), /^HTTP\/1\.1 404 /);
      const answeredAt = Date.now();
      assert.ok(
        await within(STALL_MS + 3000, () => conn.closedAt() !== null),
        'the trickling connection was cut',
      );
      assert.ok(conn.closedAt()! - answeredAt < STALL_MS + 2000);
    } finally {
      clearInterval(trickle);
      conn.socket.destroy();
    }
  });

  test('a body left unread by an early refusal but sent at once keeps the connection for the next request', async () => {
    const conn = open(t.port);
    const body = 'y'.repeat(200_000);
    conn.socket.write(
      'PUT /api/v1/nothing-here HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n' +
        `Content-Length: ${body.length}\r\n\r\n${body}` +
        'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    try {
      assert.ok(await within(5000, () => conn.closedAt() !== null), 'both answered, then closed');
      const statuses = [...conn.received().matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
      assert.deepEqual(statuses, ['404', '200']);
    } finally {
      conn.socket.destroy();
    }
  });
});
