// A local stand-in of the Razorpay subscriptions API (the one third party the tests cannot reach): it
// checks Basic auth and answers in Razorpay's JSON shapes; and signed callbacks in Razorpay's webhook
// format (X-Razorpay-Signature = HMAC-SHA256 hex of the raw body with the webhook secret).

import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './app.js';

export const RZP = {
  keyId: 'rzp_test_StandIn01',
  keySecret: 'standin-secret-value',
  planId: 'plan_HobbyMonthly',
  webhookSecret: 'whsec-standin-0123456789',
};

export interface StandInSubscription {
  id: string;
  entity: 'subscription';
  plan_id: string;
  status: string;
  current_start: number | null;
  current_end: number | null;
  ended_at: number | null;
  quantity: number;
  notes: Record<string, string>;
  total_count: number;
  paid_count: number;
  customer_notify: boolean;
  created_at: number;
  short_url: string;
}

export interface StandIn {
  url: string;
  /** `ok`: answer; `error`: 500 with Razorpay's error body; `slow`: never answer. */
  mode: 'ok' | 'error' | 'slow';
  requests: Array<{ method: string; path: string; authorized: boolean; body: unknown }>;
  subscriptions: Map<string, StandInSubscription>;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const rzpError = (code: string, description: string) => ({
  error: {
    code,
    description,
    source: 'business',
    step: 'payment_initiation',
    reason: 'input_validation_failed',
    metadata: {},
  },
});

export async function startRazorpayStandIn(): Promise<StandIn> {
  const expected = `Basic ${Buffer.from(`${RZP.keyId}:${RZP.keySecret}`).toString('base64')}`;
  const stalled: ServerResponse[] = [];
  const standIn: StandIn = {
    url: '',
    mode: 'ok',
    requests: [],
    subscriptions: new Map(),
    close: async () => {
      for (const res of stalled) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body: unknown = text ? JSON.parse(text) : undefined;
      const authorized = req.headers.authorization === expected;
      const path = req.url ?? '';
      standIn.requests.push({ method: req.method ?? '', path, authorized, body });
      if (standIn.mode === 'slow') {
        stalled.push(res);
        return;
      }
      if (standIn.mode === 'error')
        return send(
          res,
          500,
          rzpError('SERVER_ERROR', 'We are facing some trouble completing your request at the moment.'),
        );
      if (!authorized) return send(res, 401, rzpError('BAD_REQUEST_ERROR', 'Authentication failed'));
      const now = Math.floor(Date.now() / 1000);
      if (req.method === 'POST' && path === '/v1/subscriptions') {
        const b = body as {
          plan_id?: string;
          total_count?: number;
          customer_notify?: number;
          notes?: Record<string, string>;
        };
        if (b?.plan_id !== RZP.planId)
          return send(res, 400, rzpError('BAD_REQUEST_ERROR', 'The id provided does not exist'));
        if (typeof b.total_count !== 'number')
          return send(res, 400, rzpError('BAD_REQUEST_ERROR', 'The total count field is required.'));
        const id = `sub_${randomBytes(7).toString('hex')}`;
        const sub: StandInSubscription = {
          id,
          entity: 'subscription',
          plan_id: b.plan_id,
          status: 'created',
          current_start: null,
          current_end: null,
          ended_at: null,
          quantity: 1,
          notes: b.notes ?? {},
          total_count: b.total_count,
          paid_count: 0,
          customer_notify: b.customer_notify === 1,
          created_at: now,
          short_url: `https://rzp.io/i/${randomBytes(5).toString('hex')}`,
        };
        standIn.subscriptions.set(id, sub);
        return send(res, 200, sub);
      }
      const match = /^\/v1\/subscriptions\/([^/]+)(\/cancel)?$/.exec(path);
      const sub = match ? standIn.subscriptions.get(match[1]!) : undefined;
      if (!sub) return send(res, 400, rzpError('BAD_REQUEST_ERROR', 'The id provided does not exist'));
      if (req.method === 'GET' && !match![2]) return send(res, 200, sub);
      if (req.method === 'POST' && match![2]) {
        sub.status = 'cancelled';
        sub.ended_at = now;
        return send(res, 200, sub);
      }
      return send(res, 404, rzpError('BAD_REQUEST_ERROR', 'The requested URL was not found on the server.'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return standIn;
}

/** Environment for an app using the stand-in. */
export const razorpayEnv = (standIn: StandIn) => ({
  PAYMENT_PROVIDER: 'razorpay',
  RAZORPAY_KEY_ID: RZP.keyId,
  RAZORPAY_KEY_SECRET: RZP.keySecret,
  RAZORPAY_PLAN_ID: RZP.planId,
  RAZORPAY_WEBHOOK_SECRET: RZP.webhookSecret,
  RAZORPAY_API_URL: standIn.url,
});

/** A webhook body in Razorpay's format for a subscription event. */
export function webhookBody(
  event: string,
  sub: { id: string; status: string; current_end: number | null; notes?: Record<string, string> },
  createdAtS: number,
): string {
  return JSON.stringify({
    entity: 'event',
    account_id: 'acc_StandIn',
    event,
    contains: ['subscription'],
    payload: {
      subscription: {
        entity: {
          id: sub.id,
          entity: 'subscription',
          plan_id: RZP.planId,
          status: sub.status,
          current_start: sub.current_end === null ? null : sub.current_end - 30 * 86400,
          current_end: sub.current_end,
          notes: sub.notes ?? {},
          short_url: 'https://rzp.io/i/x',
        },
      },
    },
    created_at: createdAtS,
  });
}

export const sign = (body: string | Buffer, secret = RZP.webhookSecret) =>
  createHmac('sha256', secret).update(body).digest('hex');

/** POSTs a callback the way Razorpay does; `signature: null` sends none. */
export function postWebhook(
  t: TestApp,
  body: string,
  opts: { signature?: string | null; eventId?: string } = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const signature = opts.signature === undefined ? sign(body) : opts.signature;
  if (signature !== null) headers['x-razorpay-signature'] = signature;
  if (opts.eventId) headers['x-razorpay-event-id'] = opts.eventId;
  return t.api('/api/billing/webhook', { method: 'POST', headers, body });
}
