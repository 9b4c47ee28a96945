// A part of the configuration: each environment variable is defined once, as a zod schema under its name; its
// field is the name without the section's prefix in camelCase (WEBHOOK_TIMEOUT_MS -> webhooks.timeoutMs).
import { z } from 'zod';

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${Capitalize<Camel<Tail>>}` : Lowercase<S>;
type Strip<S, P extends string> = S extends `${P}${infer Rest}` ? Rest : S;

export type SectionValues<P extends string, Shape extends z.ZodRawShape> = {
  [K in keyof Shape & string as Camel<Strip<K, P>>]: z.output<Shape[K]>;
};

export interface ConfigSection<P extends string, Shape extends z.ZodRawShape, Out> {
  prefix: P;
  shape: Shape;
  /** Reads this section from the environment; problems as `NAME: message` lines. */
  read(env: Record<string, string>): { ok: true; value: Out } | { ok: false; problems: string[] };
}

const camel = (name: string) => name.toLowerCase().replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/**
 * `derive` adds values computed from others (defaults that depend on another variable) and may report
 * problems that involve several variables.
 */
export function configSection<P extends string, Shape extends z.ZodRawShape, Extra extends object = object>(
  prefix: P,
  shape: Shape,
  derive?: (values: SectionValues<P, Shape>) => Extra | string,
): ConfigSection<P, Shape, Omit<SectionValues<P, Shape>, keyof Extra> & Extra> {
  const schema = z.object(shape);
  return {
    prefix,
    shape,
    read(env) {
      const own = Object.fromEntries(Object.keys(shape).filter((k) => env[k] !== undefined && env[k] !== '').map((k) => [k, env[k]]));
      const parsed = schema.safeParse(own);
      if (!parsed.success) return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) };
      const values = Object.fromEntries(
        Object.entries(parsed.data as Record<string, unknown>).map(([k, v]) => [camel(k.startsWith(prefix) ? k.slice(prefix.length) : k), v]),
      ) as SectionValues<P, Shape>;
      const extra = derive?.(values) ?? ({} as Extra);
      if (typeof extra === 'string') return { ok: false, problems: [extra] };
      return { ok: true, value: { ...values, ...extra } as Omit<SectionValues<P, Shape>, keyof Extra> & Extra };
    },
  };
}

export type ConfigOf<S> = S extends ConfigSection<string, z.ZodRawShape, infer Out> ? Out : never;

/** A 0/1 switch. */
export const flag = (fallback: '0' | '1') =>
  z
    .enum(['0', '1'])
    .default(fallback)
    .transform((v) => v === '1');

export const milliseconds = (min: number, max: number, fallback: number) => z.coerce.number().int().min(min).max(max).default(fallback);
