// SECRET_DETECTED's remediation (issue 21 item 2): each finding's step names its own file and variable,
// AWS keys get an example host, and a server with the site proxy switched off says so and what to switch on.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AWS_EXAMPLE_HOST, detectedOf, secretDetected } from '../../src/core/scan/site-scan.js';

const BASE = 'https://slipway.example';
const stripe = detectedOf('index.html', {
  type: 'stripe_secret_key',
  variableName: 'STRIPE_SECRET_KEY',
  proxyHosts: ['api.stripe.com'],
  line: 6,
});
const aws = detectedOf('js/aws.js', {
  type: 'aws_access_key_id',
  variableName: 'AWS_ACCESS_KEY_ID',
  proxyHosts: [],
  line: 2,
});
const awsSecret = detectedOf('js/aws.js', {
  type: 'aws_secret_access_key',
  variableName: 'AWS_SECRET_ACCESS_KEY',
  proxyHosts: [],
  line: 3,
});

// biome-ignore lint/suspicious/noExplicitAny: the error's extra fields are inspected field by field.
const remediationOf = (err: { extra?: Record<string, unknown> }) => err.extra!.remediation as any;

describe('SECRET_DETECTED remediation', () => {
  test("each finding's rewrite step names its own file and variable", () => {
    const steps: string[] = remediationOf(
      secretDetected({ baseUrl: BASE, proxyEnabled: true }, 'shop', [stripe, aws, awsSecret]),
    ).steps;
    const rewrite = steps.filter((s) => s.includes('{{'));
    assert.equal(rewrite.length, 3, steps.join('\n'));
    const stripeStep = rewrite.find((s) => s.includes('index.html'))!;
    assert.match(stripeStep, /\{\{STRIPE_SECRET_KEY\}\}/);
    assert.doesNotMatch(stripeStep, /AWS_/);
    const awsSteps = rewrite.filter((s) => s.includes('js/aws.js'));
    assert.equal(awsSteps.length, 2);
    assert.ok(awsSteps.some((s) => s.includes('{{AWS_ACCESS_KEY_ID}}') && !s.includes('STRIPE')));
    assert.ok(awsSteps.some((s) => s.includes('{{AWS_SECRET_ACCESS_KEY}}') && !s.includes('STRIPE')));
  });

  test('AWS keys get an example host instead of an empty list, and the step says it is an example', () => {
    assert.deepEqual(aws.suggestedProxyHosts, [AWS_EXAMPLE_HOST]);
    assert.deepEqual(awsSecret.suggestedProxyHosts, [AWS_EXAMPLE_HOST]);
    assert.match(AWS_EXAMPLE_HOST, /amazonaws\.com$/);
    const r = remediationOf(secretDetected({ baseUrl: BASE, proxyEnabled: true }, 'shop', [aws]));
    assert.deepEqual(r.suggestedProxyHosts, [AWS_EXAMPLE_HOST]);
    assert.ok(
      r.steps.some((s: string) => s.includes(AWS_EXAMPLE_HOST) && /example/i.test(s)),
      r.steps.join('\n'),
    );
  });

  test('a server with the proxy switched off says so plainly and names PROXY_ENABLED=true', () => {
    const off = secretDetected({ baseUrl: BASE, proxyEnabled: false }, 'shop', [stripe]);
    const r = remediationOf(off);
    assert.equal(r.proxyEnabled, false);
    assert.match(off.message, /site proxy is switched off on this server/);
    assert.match(off.message, /PROXY_ENABLED=true/);
    assert.ok(
      r.steps.some((s: string) => /switched off/.test(s) && /restart with PROXY_ENABLED=true/.test(s)),
      r.steps.join('\n'),
    );
    const on = secretDetected({ baseUrl: BASE, proxyEnabled: true }, 'shop', [stripe]);
    assert.equal(remediationOf(on).proxyEnabled, true);
    assert.doesNotMatch(on.message, /switched off/);
    assert.ok(!remediationOf(on).steps.some((s: string) => /PROXY_ENABLED/.test(s)));
  });

  test('asking the owner appears exactly once in the steps', () => {
    const steps: string[] = remediationOf(
      secretDetected({ baseUrl: BASE, proxyEnabled: false }, 'shop', [stripe, aws]),
    ).steps;
    assert.equal(steps.filter((s) => /\bask\b/i.test(s)).length, 1, steps.join('\n'));
  });
});
