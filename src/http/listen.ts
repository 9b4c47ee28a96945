// Listening on a side port (the admin listener, a worker's ops listener): bound before the caller goes on, its URL
// as a client on the same host reaches it, and a stop that does not wait for idle keep-alive connections.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  url: string;
  stop(): Promise<void>;
}

export async function listen(server: Server, port: number, host: string): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
