// Upgrading a test account to Hobby the way a person does: checkout, then the test provider's Pay button.

import assert from 'node:assert/strict';
import type { TestApp } from './app.js';
import { reachable } from './publish.js';

export async function upgradeToHobby(t: TestApp, key: string): Promise<void> {
  const checkout = await t.api('/api/billing/checkout', { method: 'POST', key });
  assert.equal(checkout.status, 200, checkout.text);
  const paid = await fetch(reachable(checkout.body.checkoutUrl), { method: 'POST' });
  assert.equal(paid.status, 200, await paid.text());
}

/** Cancels through the portal's button: Hobby runs until the paid period ends. */
export async function cancelHobby(t: TestApp, key: string): Promise<void> {
  const portal = await t.api('/api/billing/portal', { method: 'POST', key });
  assert.equal(portal.status, 200, portal.text);
  const token = new URL(portal.body.portalUrl).searchParams.get('token')!;
  const res = await fetch(`${t.url}/billing/portal/cancel`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  assert.equal(res.status, 200);
}
