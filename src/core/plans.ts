// Plan limits: one table per plan (spec "Limits"), with operator overrides from config applied on top.

export type PlanName = 'free' | 'hobby';

export const PLAN_NAMES: readonly PlanName[] = ['free', 'hobby'];

export function isPlanName(value: unknown): value is PlanName {
  return value === 'free' || value === 'hobby';
}

/**
 * What a plan allows. Request rate limits are not here: they are config (`RATE_LIMIT_ANONYMOUS`,
 * `RATE_LIMIT_FREE`, `RATE_LIMIT_HOBBY` -> `config.rateLimits`), cover the anonymous caller who has
 * no plan, and are read by the rate limiter only; keeping them in one place keeps one default.
 */
export interface PlanLimits {
  /** Sites an account may own; null = unlimited. */
  maxSites: number | null;
  /** Bytes of the files of every site's current version together (CONTRACT.md "Account"). */
  maxStorageBytes: number;
  /** Bytes of one file; checked on the manifest (413 FILE_TOO_LARGE). */
  maxFileSizeBytes: number;
  /** Custom domains an account may add. */
  maxCustomDomains: number;
  /** Whether the account may claim a vanity handle. */
  handles: boolean;
}

/** Per-plan operator/test overrides (config's PLAN_<PLAN>_<LIMIT> variables); absent fields keep the table. */
export type PlanOverrides = Partial<Record<PlanName, Partial<PlanLimits>>>;

const MB = 1024 * 1024;
const GB = 1024 * MB;

/**
 * The tables. Free is the spec's "Limits" table exactly. Hobby: unlimited sites and 5 custom domains
 * (spec); storage and file size are "not shown" there, so: 10 GB of storage (50 x Free), and 500 MB
 * per file, large enough for video and archives while one upload stays a reasonable single PUT.
 */
export const PLANS: Readonly<Record<PlanName, Readonly<PlanLimits>>> = Object.freeze({
  free: Object.freeze({
    maxSites: 500,
    maxStorageBytes: 200 * MB, // 209715200
    maxFileSizeBytes: 200 * MB, // 209715200
    maxCustomDomains: 1,
    handles: false,
  }),
  hobby: Object.freeze({
    maxSites: null,
    maxStorageBytes: 10 * GB, // 10737418240
    maxFileSizeBytes: 500 * MB, // 524288000
    maxCustomDomains: 5,
    handles: true,
  }),
});

/** The limits of `plan`: its table with the fields of `overrides[plan]` that are set laid over it. */
export function planLimits(plan: PlanName, overrides: PlanOverrides = {}): PlanLimits {
  const limits: PlanLimits = { ...PLANS[plan] };
  const override = overrides[plan] ?? {};
  // Only the table's own fields: a stray key in the overrides cannot add a limit nobody reads.
  for (const key of Object.keys(limits) as (keyof PlanLimits)[]) {
    const value = override[key];
    if (value !== undefined) Object.assign(limits, { [key]: value });
  }
  return limits;
}

/**
 * The plan an account has now. A Hobby plan whose subscription stopped renewing runs until `plan_until`
 * (the paid period's end), then the account is `free` (core/billing.ts keeps both fields).
 */
export function effectivePlan(account: { plan: PlanName; plan_until: number | null }, now: number): PlanName {
  if (account.plan !== 'hobby') return 'free';
  return account.plan_until === null || account.plan_until > now ? 'hobby' : 'free';
}

/** The account with its plan as of `now`. */
export function withEffectivePlan<T extends { plan: PlanName; plan_until: number | null }>(
  account: T,
  now: number,
): T {
  const plan = effectivePlan(account, now);
  return plan === account.plan ? account : { ...account, plan };
}
