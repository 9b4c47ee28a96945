// The subset of autocannon 9's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** A function, or in workers mode the path of a CommonJS module exporting one. */
    setupRequest?: string | ((req: Request & Record<string, unknown>) => Request | null);
    /** Anything else travels with the request object to setupRequest. */
    [extra: string]: unknown;
  }
  export interface Options extends Request {
    url: string;
    connections?: number;
    duration?: number;
    workers?: number;
    timeout?: number;
    /** Ends the run after this many responses (per worker), duration permitting. */
    maxOverallRequests?: number;
    /** ms between samples; a run ends at the first sample after its stop condition. */
    sampleInt?: number;
    requests?: Request[];
    /** A function, or in workers mode the path of a CommonJS module exporting one. */
    verifyBody?: string | ((body: string) => boolean);
  }
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }
  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
