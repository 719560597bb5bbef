// What the route plugins hand to core, built once per app from its context: the API's routes and the
// dashboard's form actions call the same core functions with the same dependencies.

import type { AppContext } from '../context.js';
import type { BillingDeps } from '../core/billing.js';
import type { DomainDeps } from '../core/domains.js';
import type { HandleDeps } from '../core/handle.js';
import type { LinkDeps } from '../core/links.js';
import type { ProxyHostDeps } from '../core/proxy-hosts.js';
import type { PublishDeps } from '../core/publish.js';
import { secretScanCheck } from '../core/scan/site-scan.js';
import type { SignInDeps } from '../core/signin.js';
import type { TlsAskDeps } from '../core/tls-ask.js';
import type { VariableDeps } from '../core/variables.js';

export interface CoreDeps {
  /** Sign-in codes, API keys and their limits: the API's request-code/verify-code and the web form. */
  signIn: SignInDeps;
  /** Sites: publish, update, finalize (with the secret scan), list, claim, metadata, versions. */
  publish: PublishDeps;
  /** Site variables and proxy hosts. */
  secrets: VariableDeps & ProxyHostDeps;
  /** Handle, custom domains, links, the TLS front end's question. */
  hosts: HandleDeps & DomainDeps & LinkDeps & TlsAskDeps;
  billing: BillingDeps;
}

export function coreDeps(ctx: AppContext): CoreDeps {
  const { db, clock, config, changes } = ctx;
  return {
    signIn: {
      db,
      mailer: ctx.mailer,
      clock,
      codeKey: ctx.keys.loginCode,
      serviceName: 'Slipway',
      rate: ctx.rate,
      limits: config.signInLimits,
    },
    publish: {
      db,
      blobs: ctx.blobs,
      clock,
      config,
      uploadKey: ctx.keys.uploadToken,
      changes,
      finalizeChecks: [secretScanCheck(ctx)],
    },
    secrets: { db, clock, variablesKey: ctx.keys.variables },
    hosts: { db, clock, config, changes, dns: ctx.dns },
    billing: {
      db,
      clock,
      config,
      payments: ctx.payments,
      changes,
      logger: ctx.logger,
      portalKey: ctx.keys.billingPortal,
    },
  };
}
