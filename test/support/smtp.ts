// A real SMTP server for the e-mail tests (the smtp-server package), reading what arrives with mailparser. It can be
// stopped and started again on its port (an outage), answer a recipient with a 4xx or 5xx, and check credentials.
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from './net.ts';

export interface ArrivedMail {
  /** Envelope recipients (RCPT TO). */
  to: string[];
  from: string;
  /** The raw message as it came over the wire (headers included). */
  raw: string;
  parsed: ParsedMail;
}

export interface TestSmtp {
  port: number;
  /** SMTP_URL for the service (with the credentials this server checks). */
  url: string;
  user: string;
  password: string;
  arrived: ArrivedMail[];
  /** Recipients answered with this reply at RCPT TO (e.g. 550, 451). */
  rejectWith: Map<string, number>;
  /** Authentication attempts seen (user names). */
  logins: string[];
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Waits until `count` messages to `recipient` (any, when absent) arrived; answers them. */
  waitFor(count: number, recipient?: string, timeoutMs?: number): Promise<ArrivedMail[]>;
}

export async function startSmtp(options: { user?: string; password?: string } = {}): Promise<TestSmtp> {
  const port = await freePort();
  const user = options.user ?? 'mailer';
  const password = options.password ?? 'pa55-w0rd-Secret';
  let server: SMTPServer | null = null;
  const smtp: TestSmtp = {
    port,
    user,
    password,
    url: `smtp://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
    arrived: [],
    rejectWith: new Map(),
    logins: [],
    async start() {
      server = new SMTPServer({
        secure: false,
        disabledCommands: ['STARTTLS'],
        allowInsecureAuth: true,
        authOptional: false,
        logger: false,
        onAuth(auth, _session, callback) {
          smtp.logins.push(auth.username ?? '');
          if (auth.username === user && auth.password === password) callback(null, { user });
          else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
        },
        onRcptTo(address, _session, callback) {
          const code = smtp.rejectWith.get(address.address.toLowerCase());
          if (code) return callback(Object.assign(new Error(code >= 500 ? 'Mailbox unavailable' : 'Try again later'), { responseCode: code }));
          callback();
        },
        onData(stream, session, callback) {
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            void simpleParser(raw).then((parsed) => {
              smtp.arrived.push({
                to: session.envelope.rcptTo.map((r) => r.address),
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                raw,
                parsed,
              });
              callback();
            }, callback);
          });
        },
      });
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, '127.0.0.1', () => resolve());
      });
    },
    async stop() {
      const s = server;
      server = null;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    async waitFor(count, recipient, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      const matching = () => smtp.arrived.filter((m) => !recipient || m.to.includes(recipient));
      while (matching().length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} e-mails${recipient ? ` to ${recipient}` : ''}, got ${matching().length}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return matching();
    },
  };
  await smtp.start();
  return smtp;
}
