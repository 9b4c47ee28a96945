// A TCP proxy the test controls, between the server and a shared service (PostgreSQL): cut() destroys every
// connection through it and refuses new ones, as a database crash would look to the server; stall() destroys them
// and takes new ones without ever answering, as a network partition does. The service itself is never touched
// (other tests use it); restore() passes connections again on the same port.
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections through the proxy now. */
  readonly open: number;
  cut(): Promise<void>;
  stall(): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let stalled = false;
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    // A destroyed peer is expected here; without a listener the error would end the test process.
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    if (stalled) return track(client);
    const upstream = net.connect(target.port, target.host);
    track(client);
    track(upstream);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stopListening = () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const dropAll = () => {
    for (const s of sockets) s.destroy();
  };
  const cut = async () => {
    const closed = stopListening();
    dropAll();
    await closed;
  };
  return {
    port,
    get open() {
      return sockets.size / 2;
    },
    cut,
    stall() {
      stalled = true;
      dropAll();
    },
    async restore() {
      stalled = false;
      dropAll();
      if (!server.listening) await listen(port);
    },
    close: cut,
  };
}
