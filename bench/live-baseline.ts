// The fan-out baseline of bench/live.ts, run as a process of its own like the server: a plain `ws` server on one
// port that answers the graphql-transport-ws handshake (connection_ack, then nothing for subscribe) and, for each
// POST /broadcast, sends the body to every subscribed client as a graphql-ws `next` message for that client's
// subscription id. Serialising once per client (the id differs) is what the real server does as well.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

const subscribers = new Map<WebSocket, string>();
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString('utf8')));
  req.on('end', () => {
    if (req.url === '/broadcast' && req.method === 'POST') {
      const payload = JSON.parse(body) as unknown;
      for (const [socket, id] of subscribers) socket.send(JSON.stringify({ id, type: 'next', payload }));
      res.writeHead(204).end();
    } else if (req.url === '/rss') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(process.memoryUsage()));
    } else {
      res.writeHead(404).end();
    }
  });
});
const wss = new WebSocketServer({ server, path: '/graphql' });
wss.on('connection', (socket) => {
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { type: string; id?: string };
    if (message.type === 'connection_init') socket.send(JSON.stringify({ type: 'connection_ack' }));
    else if (message.type === 'subscribe') subscribers.set(socket, message.id!);
    else if (message.type === 'ping') socket.send(JSON.stringify({ type: 'pong' }));
  });
  socket.on('close', () => subscribers.delete(socket));
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
