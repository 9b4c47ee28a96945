import { parse, isSafeNumber, stringify, LosslessNumber } from 'lossless-json';

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

/** A decimal written as a JSON number with exactly these digits (where the spec wants a number, e.g. amounts). */
export const jsonNumber = (plainDigits: string): LosslessNumber => new LosslessNumber(plainDigits);

/** JSON.parse keeping every number's exact digits (as jsonNumber values), for text that is shown again with jsonText. */
export const parseJsonKeepingNumbers = (text: string): unknown => parse(text);

/** JSON text of a value, with jsonNumber values as exact number literals. */
export const jsonText = (value: unknown): string => stringify(value) ?? 'null';

/** A response body already serialised (by jsonText, where numbers must keep their exact digits). */
export class JsonText {
  constructor(readonly text: string) {}
}
