// Address resolution for outgoing requests (the site proxy): every A and AAAA answer of a hostname, from
// the DNS servers of DNS_SERVERS when it is set (a loopback peer in tests), else the system resolver
// (which also reads /etc/hosts).

import type { LookupAddress } from 'node:dns';
import { lookup, Resolver } from 'node:dns/promises';

export type AddressResolver = (hostname: string) => Promise<LookupAddress[]>;

/** `servers`: `ip` or `ip:port` entries (config.dnsServers); undefined = the system resolver. */
export function createAddressResolver(servers: string[] | undefined): AddressResolver {
  if (!servers || servers.length === 0) return (hostname) => lookup(hostname, { all: true, verbatim: true });
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  resolver.setServers(servers);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses: LookupAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length === 0) {
      throw v4.status === 'rejected' ? v4.reason : new Error(`no addresses for ${hostname}`);
    }
    return addresses;
  };
}

/** The record lookups custom-domain verification needs (each rejects with the resolver's error code). */
export interface DnsLookups {
  txt(name: string): Promise<string[]>;
  cname(name: string): Promise<string[]>;
  addresses(name: string): Promise<string[]>;
}

/** A DNS server that does not answer fails a lookup after about this long (2 tries of 1.5 s). */
export const DNS_TIMEOUT_MS = 1500;

export function createDnsLookups(servers: string[] | undefined): DnsLookups {
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 2 });
  if (servers && servers.length > 0) resolver.setServers(servers);
  return {
    txt: async (name) => (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')),
    cname: (name) => resolver.resolveCname(name),
    addresses: async (name) => {
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
      const found = [
        ...(v4.status === 'fulfilled' ? v4.value : []),
        ...(v6.status === 'fulfilled' ? v6.value : []),
      ];
      if (found.length === 0 && v4.status === 'rejected') throw v4.reason;
      return found;
    },
  };
}
