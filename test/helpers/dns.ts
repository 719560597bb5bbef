// A DNS server on loopback (dns2) answering A and AAAA from a table: point DNS_SERVERS at it.

import dns2 from 'dns2';
import { freePort } from './app.js';

export interface DnsRecords {
  [name: string]: { A?: string[]; AAAA?: string[] };
}

export interface DnsPeer {
  /** `127.0.0.1:<port>`, the DNS_SERVERS value. */
  server: string;
  records: DnsRecords;
  /** Names asked, in order. */
  queries: string[];
  close(): Promise<void>;
}

export async function startDnsPeer(records: DnsRecords): Promise<DnsPeer> {
  const { Packet } = dns2;
  const queries: string[] = [];
  const server = dns2.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      for (const q of request.questions) {
        const name = q.name.toLowerCase();
        queries.push(name);
        const entry = records[name];
        if (q.type === Packet.TYPE.A) {
          for (const address of entry?.A ?? []) {
            response.answers.push({
              name: q.name,
              type: Packet.TYPE.A,
              class: Packet.CLASS.IN,
              ttl: 1,
              address,
            } as never);
          }
        } else if (q.type === Packet.TYPE.AAAA) {
          for (const address of entry?.AAAA ?? []) {
            response.answers.push({
              name: q.name,
              type: Packet.TYPE.AAAA,
              class: Packet.CLASS.IN,
              ttl: 1,
              address,
            } as never);
          }
        }
      }
      void send(response);
    },
  });
  // UDP for ordinary answers and TCP on the same port for long ones.
  const port = await freePort();
  await server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } });
  return { server: `127.0.0.1:${port}`, records, queries, close: () => server.close() };
}
