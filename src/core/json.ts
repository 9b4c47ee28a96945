import { parse, isSafeNumber } from 'lossless-json';

/** A JSON number literal kept as its exact source text (prices must never pass through a float). */
export class DecimalLiteral {
  constructor(readonly text: string) {}
  toJSON(): string {
    return this.text;
  }
}

/** JSON.parse, except non-integer or unsafe numbers arrive as DecimalLiteral with their exact digits. */
export function parseJsonExact(text: string): unknown {
  return parse(text, null, (digits: string) =>
    /^-?\d+$/.test(digits) && isSafeNumber(digits) ? Number(digits) : new DecimalLiteral(digits),
  );
}
