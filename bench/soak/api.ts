// Plain HTTP to the proxy: one connection per request (agent: false), so requests spread over the instances and
// none rides a keep-alive socket of a killed one. A network error is an unacknowledged write, never a retry here.
import { request } from 'node:http';

export interface Answer {
  status: number;
  // The load reads whatever shape the endpoint answers.
  body: any;
  text: string;
}

export function call(baseUrl: string, method: string, path: string, options: { token?: string; json?: unknown; timeoutMs?: number } = {}): Promise<Answer> {
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  const headers: Record<string, string | number> = {};
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(body);
  }
  return new Promise<Answer>((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { method, headers, agent: false, timeout: options.timeoutMs ?? 20_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('error', reject);
      res.on('end', () => {
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}
