// A DNS server on loopback (dns2) answering A and AAAA from a table: point DNS_SERVERS at it.

import dns2 from 'dns2';
import { freePort } from './app.js';

export interface DnsRecords {
  [name: string]: { A?: string[]; AAAA?: string[]; TXT?: string[]; CNAME?: string };
}

export interface DnsPeer {
  /** `127.0.0.1:<port>`, the DNS_SERVERS value. */
  server: string;
  records: DnsRecords;
  /** Names asked, in order. */
  queries: string[];
  /** While true the server drops every query (a DNS server that does not answer). */
  silent: boolean;
  close(): Promise<void>;
}

export async function startDnsPeer(records: DnsRecords): Promise<DnsPeer> {
  const { Packet } = dns2;
  const queries: string[] = [];
  const peer = { records, silent: false };
  const server = dns2.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      if (peer.silent) return;
      for (const q of request.questions) {
        const name = q.name.toLowerCase().replace(/\.$/, '');
        queries.push(name);
        const entry = peer.records[name];
        const answer = (type: number, data: Record<string, unknown>) =>
          response.answers.push({ name: q.name, type, class: Packet.CLASS.IN, ttl: 1, ...data } as never);
        if (
          entry?.CNAME !== undefined &&
          (q.type === Packet.TYPE.CNAME || q.type === Packet.TYPE.A || q.type === Packet.TYPE.AAAA)
        ) {
          answer(Packet.TYPE.CNAME, { domain: entry.CNAME });
          continue;
        }
        if (q.type === Packet.TYPE.A)
          for (const address of entry?.A ?? []) answer(Packet.TYPE.A, { address });
        if (q.type === Packet.TYPE.AAAA)
          for (const address of entry?.AAAA ?? []) answer(Packet.TYPE.AAAA, { address });
        if (q.type === Packet.TYPE.TXT)
          for (const data of entry?.TXT ?? []) answer(Packet.TYPE.TXT, { data });
      }
      void send(response);
    },
  });
  // UDP for ordinary answers and TCP on the same port for long ones.
  const port = await freePort();
  await server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } });
  return {
    server: `127.0.0.1:${port}`,
    records,
    queries,
    get silent() {
      return peer.silent;
    },
    set silent(value: boolean) {
      peer.silent = value;
    },
    close: () => server.close(),
  };
}
